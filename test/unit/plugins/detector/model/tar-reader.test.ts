import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { bufferSource } from '../../../../../plugins/detector/src/model/byte-source.js';
import { readTar } from '../../../../../plugins/detector/src/model/tar-reader.js';
import { writeTar } from '../../../../support/onnx-model.js';

const enc = new TextEncoder();

test('tar reader: entries, folders, sizes on and off block boundaries, long names via prefix', async () => {
  const longDir = `top/${'d'.repeat(90)}`;
  const archive = writeTar([
    { name: 'top', data: '', directory: true },
    { name: 'top/config.json', data: '{"a":1}' },
    { name: 'top/exact.bin', data: new Uint8Array(1024).fill(7) },
    { name: `${longDir}/labels.json`, data: 'x'.repeat(513) },
  ]);
  const { entries, data } = await readTar(bufferSource(archive), () => true);
  assert.deepEqual(
    entries.map((e) => [e.name, e.type, e.size]),
    [
      ['top', 'directory', 0],
      ['top/config.json', 'file', 7],
      ['top/exact.bin', 'file', 1024],
      [`${longDir}/labels.json`, 'file', 513],
    ],
  );
  assert.deepEqual(data.get('top/config.json'), enc.encode('{"a":1}'));
  assert.deepEqual(data.get('top/exact.bin'), new Uint8Array(1024).fill(7));
  assert.deepEqual(data.get(`${longDir}/labels.json`), enc.encode('x'.repeat(513)));
});

test('tar reader: GNU long names and pax paths are honoured', async () => {
  const long = `pkg/${'n'.repeat(150)}.json`;
  const gnu = writeTar([
    { name: '././@LongLink', data: `${long}\0` },
    { name: 'short', data: 'abc' },
  ]);
  gnu[156] = 'L'.charCodeAt(0);
  fixChecksum(gnu, 0);
  assert.deepEqual(
    (await readTar(bufferSource(gnu))).entries.map((e) => e.name),
    [long],
  );

  const record = `path=${long}\n`;
  const len = record.length + 3 + 1; // "NNN " prefix
  const pax = writeTar([
    { name: 'PaxHeader', data: `${len} ${record}` },
    { name: 'short', data: 'abc' },
  ]);
  pax[156] = 'x'.charCodeAt(0);
  fixChecksum(pax, 0);
  assert.deepEqual(
    (await readTar(bufferSource(pax))).entries.map((e) => e.name),
    [long],
  );
});

test('tar reader: truncation, bad checksums, garbage and empty archives are errors', async () => {
  const archive = writeTar([{ name: 'a.bin', data: new Uint8Array(3000) }]);
  const fails = async (bytes: Uint8Array, pattern: RegExp) =>
    assert.rejects(readTar(bufferSource(bytes)), (err: unknown) => isLookoutError(err, 'model_package_invalid') && pattern.test(err.message));
  await fails(archive.subarray(0, 2000), /truncated/);
  await fails(archive.subarray(0, 300), /truncated/);
  const bad = Uint8Array.from(archive);
  bad[0] = 'b'.charCodeAt(0);
  await fails(bad, /checksum mismatch/);
  await fails(new Uint8Array(1024), /no entries/);
  await fails(enc.encode('not a tar at all'.repeat(64)), /checksum|not octal/);
});

function fixChecksum(archive: Uint8Array, at: number): void {
  archive.fill(0x20, at + 148, at + 156);
  let sum = 0;
  for (let i = at; i < at + 512; i++) sum += archive[i];
  archive.set(enc.encode(`${sum.toString(8).padStart(6, '0')}\0 `), at + 148);
}
