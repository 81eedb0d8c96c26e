import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkImage } from '../../../../../builder/plugins/dataset/src/image-header.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

const run = promisify(execFile);

test('image check: real PNG and JPEG files give their size; empty, truncated and garbled ones are told apart', async (t) => {
  const { dir, cleanup } = await scratchDir('lookout-image-');
  t.after(cleanup);
  for (const ext of ['png', 'jpg']) await run('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc=size=97x41', '-frames:v', '1', join(dir, `a.${ext}`)]);
  const png = await readFile(join(dir, 'a.png'));
  const jpg = await readFile(join(dir, 'a.jpg'));
  assert.deepEqual(checkImage(png), { ok: true, format: 'png', width: 97, height: 41 });
  assert.deepEqual(checkImage(jpg), { ok: true, format: 'jpeg', width: 97, height: 41 });
  assert.equal((checkImage(Buffer.alloc(0)) as any).problem, 'empty');
  for (const cut of [png.subarray(0, png.length - 5), jpg.subarray(0, jpg.length - 2), jpg.subarray(0, 40), png.subarray(0, 20)]) {
    const c = checkImage(cut);
    assert.equal(c.ok, false);
    assert.equal((c as any).problem, 'corrupt');
  }
  const flipped = Buffer.from(png);
  flipped[40] ^= 0xff;
  assert.match((checkImage(flipped) as any).why, /CRC/);
  assert.match((checkImage(Buffer.from('GIF89a....')) as any).why, /neither a PNG nor a JPEG/);
});
