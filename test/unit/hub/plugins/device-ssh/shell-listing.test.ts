import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { listingCommand, parseListing } from '../../../../../hub/plugins/device-ssh/src/shell-listing.js';
import { shellQuote } from '../../../../../lib/ssh/index.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

const run = promisify(execFile);
const CHUNK = '20260101T000000000Z_000001.h265';

describe('shell listing', () => {
  let scratch: ScratchDir;
  let root: string;

  before(async () => {
    scratch = await scratchDir('shell-listing-');
    // A root whose name needs quoting: spaces, a quote, a $ and a ;.
    root = join(scratch.dir, "it's $HOME; rec");
    mkdirSync(root);
    writeFileSync(join(root, CHUNK), 'abc');
    writeFileSync(join(root, '.h265_status'), '{}');
    writeFileSync(join(root, '.20260101T000100000Z_000002.h265.part'), 'x');
    writeFileSync(join(root, 'notes.txt'), 'x');
    symlinkSync('/etc/hostname', join(root, '20260101T000200000Z_000003.h265'));
    for (const name of [CHUNK, '.h265_status']) utimesSync(join(root, name), 1_767_225_600, 1_767_225_600);
  });
  after(() => scratch.cleanup());

  const expected = [
    { name: '.h265_status', size: 2, mtimeMs: 1_767_225_600_000 },
    { name: CHUNK, size: 3, mtimeMs: 1_767_225_600_000 },
  ];

  it('quotes a word for sh', async () => {
    for (const value of ["it's", '$(reboot)', '`x`', 'a b', "'", '"\\']) {
      const { stdout } = await run('sh', ['-c', `printf %s ${shellQuote(value)}`]);
      assert.equal(stdout, value);
    }
  });

  it('lists with find -printf (GNU)', async () => {
    const { stdout } = await run('sh', ['-c', listingCommand(root)]);
    assert.deepEqual(parseListing(stdout), expected);
  });

  it('lists with stat where find has no -printf (BusyBox)', async () => {
    const bin = join(scratch.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'find'), '#!/bin/sh\necho "find: unrecognized: -printf" >&2\nexit 1\n');
    chmodSync(join(bin, 'find'), 0o755);
    const { stdout } = await run('sh', ['-c', listingCommand(root)], { env: { PATH: `${bin}:/usr/bin:/bin` } });
    assert.deepEqual(parseListing(stdout), expected);
  });

  it('exits 3 for a missing root', async () => {
    await assert.rejects(run('sh', ['-c', listingCommand(join(scratch.dir, 'absent'))]), (err: { code?: number }) => err.code === 3);
  });

  it('parses lines, dropping what is not a recording file', () => {
    const text = [
      `${CHUNK}\t10\t1767225600.5000000000`,
      `./${CHUNK.replace('01.h265', '02.h265')}\t11\t1767225601`,
      '../etc/passwd\t1\t1',
      'notes.txt\t1\t1',
      `${CHUNK}\tnot-a-size\t1`,
      'garbage',
      '',
    ].join('\n');
    assert.deepEqual(parseListing(text), [
      { name: CHUNK, size: 10, mtimeMs: 1_767_225_600_500 },
      { name: CHUNK.replace('01.h265', '02.h265'), size: 11, mtimeMs: 1_767_225_601_000 },
    ]);
  });
});
