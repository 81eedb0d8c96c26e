import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { COMMANDS } from '../../../operator/src/lookout-cli.js';
import { EXIT, EXIT_MEANINGS } from '../../../operator/src/exit-codes.js';
import { defineCommand, SSH_EXITS } from '../../../operator/src/command-spec.js';

const run = promisify(execFile);
const cli = join(packageRoot(), 'bin', 'lookout.js');
const codeOf = (e: number | readonly [number, string]): number => (typeof e === 'number' ? e : e[0]);

describe('lookout: each command is one declaration', () => {
  it('every command has a summary, a usage and (but certs, which prints its own) a help with each of its flags', () => {
    for (const [name, c] of Object.entries(COMMANDS)) {
      assert.ok(c.summary.length > 10, name);
      assert.match(c.usage, new RegExp(`^lookout ${name}(\\s|$)`), name);
      if (name === 'certs') continue;
      assert.ok(c.help && c.flags, name);
      for (const flag of c.flags.filter((f) => f !== 'help')) assert.ok(c.help.includes(`--${flag}`), `${name}'s help names --${flag}`);
    }
  });

  it('every exit code a command declares is in the one table, and its help lists exactly those', () => {
    const table = new Set<number>(Object.values(EXIT));
    for (const [name, c] of Object.entries(COMMANDS)) {
      assert.ok(c.exits.length > 0, name);
      for (const e of c.exits) assert.ok(table.has(codeOf(e)), `${name}: exit ${codeOf(e)} is in the table`);
      assert.ok(
        [0, 1, 2].every((code) => c.exits.some((e) => codeOf(e) === code)),
        `${name} declares 0, 1 and 2`,
      );
      if (!c.help) continue;
      const listed = [...c.help.split('\nExit codes:\n')[1].matchAll(/^ {2}(\d) {2}/gm)].map((m) => Number(m[1]));
      assert.deepEqual(listed, c.exits.map(codeOf), name);
    }
  });

  it('the SSH commands declare what the SSH prelude can give (3 credentials, 4 host key, 5 unreachable)', () => {
    for (const name of ['apply-layer', 'push-models', 'deploy', 'soak', 'soak-gate', 'visual-gate', 'prune-recordings']) {
      for (const code of SSH_EXITS) assert.ok(COMMANDS[name].exits.includes(code), `${name} declares ${code}`);
      assert.match(COMMANDS[name].help ?? '', /\nDevice and SSH:\n/, name);
    }
  });

  it('`lookout <command> --help` prints the help the declaration builds, nothing else', async () => {
    for (const name of ['push-models', 'readiness', 'layers']) {
      const { stdout } = await run(process.execPath, [cli, name, '--help']);
      assert.equal(stdout, `${COMMANDS[name].help}\n`, name);
    }
  });

  it('a declaration builds its help from its parts, and its parser refuses an undeclared flag as a usage error', async () => {
    const c = defineCommand({
      summary: 'a command made for this test',
      usage: 'lookout probe [--n <n>]',
      about: 'Options:\n  --n <n>   a number',
      examples: ['lookout probe --n 3'],
      exits: [EXIT.ok, [EXIT.checkFailed, 'the probe saw nothing']],
      ssh: true,
      options: { n: { type: 'string', default: '1' } },
      run: ({ values }) => Promise.resolve(Number(values.n) + (values['timeout-ms'] === '30000' ? 0 : 100)),
    });
    assert.equal(
      c.help?.replace(/\nDevice and SSH:\n[\s\S]*?\n\nExamples:/, '\n<ssh>\n\nExamples:'),
      `lookout probe [--n <n>]\n\nOptions:\n  --n <n>   a number\n\n<ssh>\n\nExamples:\n  lookout probe --n 3\n\nExit codes:\n  0  ${EXIT_MEANINGS[0]}\n  7  the probe saw nothing`,
    );
    assert.equal(await c.run(['--n', '3']), 3);
    await assert.rejects(c.run(['--m', '3']), (err: { code?: string }) => err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION');
  });
});
