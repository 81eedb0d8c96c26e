import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { COMMANDS } from '../../../operator/src/lookout-cli.js';

const run = promisify(execFile);
const cli = join(packageRoot(), 'bin', 'lookout.js');
const SSH_COMMANDS = [
  'apply-layer',
  'deploy',
  'harness',
  'orchestrate',
  'prune-recordings',
  'push-models',
  'soak',
  'soak-gate',
  'soak-matrix',
  'tap',
  'visual-gate',
];

describe('lookout <command> --help', () => {
  const withHelp = Object.entries(COMMANDS)
    .filter(([, c]) => c.help)
    .map(([name]) => name);

  it('every command has a full help (certs prints its own)', () => {
    assert.deepEqual(
      withHelp.sort(),
      Object.keys(COMMANDS)
        .filter((c) => c !== 'certs')
        .sort(),
    );
  });

  it('prints usage, examples and the exit codes, and exits 0', async () => {
    for (const name of [...withHelp, 'certs']) {
      const { stdout } = await run(process.execPath, [cli, name, '--help']);
      assert.match(stdout, new RegExp(`^lookout ${name}(\\s|$)`), name);
      assert.match(stdout, /\nExamples:\n {2}\S/, name);
      if (name === 'certs') continue;
      assert.match(stdout, /\nExit codes.*:\n {2}0 {2}/, name);
      // The SSH commands list what the SSH prelude can give: refused credentials (3), host key (4), unreachable (5).
      if (SSH_COMMANDS.includes(name) && COMMANDS[name].exits.includes(3))
        assert.match(stdout, /\nExit codes:\n {2}0 {2}done[\s\S]* {2}3 {2}the device refused[\s\S]* {2}5 {2}/, name);
    }
  });
});
