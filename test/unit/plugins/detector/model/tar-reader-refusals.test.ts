import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pack } from 'tar-stream';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { bufferSource } from '../../../../../plugins/detector/src/model/byte-source.js';
import { readModelPackage } from '../../../../../plugins/detector/src/model/read-package.js';
import { readTar } from '../../../../../plugins/detector/src/model/tar-reader.js';
import { testConfig, testLabels, writeTar } from '../../../../support/onnx-model.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

const enc = new TextEncoder();

type PackEntry = Parameters<ReturnType<typeof pack>['entry']>[0] & { data?: string | Uint8Array };

async function packTar(entries: PackEntry[]): Promise<Uint8Array> {
  const p = pack();
  for (const { data, ...header } of entries) p.entry(header, typeof data === 'string' ? Buffer.from(data) : Buffer.from(data ?? []));
  p.finalize();
  const chunks: Uint8Array[] = [];
  for await (const chunk of p) chunks.push(chunk as Uint8Array);
  return Buffer.concat(chunks);
}

function refused(bytes: Uint8Array, pattern: RegExp) {
  return assert.rejects(
    readTar(bufferSource(bytes, 'pkg.tar'), () => true),
    (err: unknown) => {
      assert.ok(isLookoutError(err, 'model_package_invalid'), `expected model_package_invalid, got ${String(err)}`);
      assert.match(err.message, /^pkg\.tar: /);
      assert.match(err.message, pattern);
      return true;
    },
  );
}

function fixChecksum(archive: Uint8Array, at: number): void {
  archive.fill(0x20, at + 148, at + 156);
  let sum = 0;
  for (let i = at; i < at + 512; i++) sum += archive[i];
  archive.set(enc.encode(`${sum.toString(8).padStart(6, '0')}\0 `), at + 148);
}

test('tar reader: an archive written by tar-stream reads back; the ./ root and ./ prefixes are dropped', async () => {
  const archive = await packTar([
    { name: './', type: 'directory' },
    { name: './pkg', type: 'directory' },
    { name: './pkg/config.json', data: '{"a":1}' },
    { name: `./pkg/${'n'.repeat(150)}.bin`, data: new Uint8Array(700).fill(3) },
  ]);
  const { entries, data } = await readTar(bufferSource(archive), (e) => e.name.endsWith('.json'));
  assert.deepEqual(
    entries.map((e) => [e.name, e.type, e.size]),
    [
      ['pkg', 'directory', 0],
      ['pkg/config.json', 'file', 7],
      [`pkg/${'n'.repeat(150)}.bin`, 'file', 700],
    ],
  );
  assert.deepEqual([...data.keys()], ['pkg/config.json']);
  assert.deepEqual(data.get('pkg/config.json'), enc.encode('{"a":1}'));
});

test('tar reader: names that escape the package are refused (absolute, "..", also through pax and GNU long names)', async () => {
  await refused(await packTar([{ name: '/etc/config.json', data: '{}' }]), /entry "\/etc\/config\.json" has an absolute path/);
  await refused(await packTar([{ name: '../config.json', data: '{}' }]), /entry "\.\.\/config\.json" has a "\.\." segment/);
  await refused(await packTar([{ name: 'pkg/../../config.json', data: '{}' }]), /has a "\.\." segment/);
  const longEscape = `pkg/../${'x'.repeat(150)}`; // too long for a ustar header: tar-stream writes a pax path
  await refused(await packTar([{ name: longEscape, data: '{}' }]), /has a "\.\." segment/);

  const gnu = writeTar([
    { name: '././@LongLink', data: `../${'y'.repeat(150)}\0` },
    { name: 'short', data: 'abc' },
  ]);
  gnu[156] = 'L'.charCodeAt(0);
  fixChecksum(gnu, 0);
  await refused(gnu, /has a "\.\." segment/);
  // Only whole ".." segments are refused.
  assert.deepEqual(
    (await readTar(bufferSource(await packTar([{ name: 'a/..b/c..', data: '' }])))).entries.map((e) => e.name),
    ['a/..b/c..'],
  );
});

test('tar reader: links, devices and fifos are refused, naming the entry and its type', async () => {
  const cases: Array<[PackEntry, RegExp]> = [
    [{ name: 'model.onnx', type: 'symlink', linkname: '/dev/zero' }, /entry "model\.onnx" is a symlink; a package holds only files and folders/],
    [{ name: 'model.onnx', type: 'link', linkname: 'config.json' }, /entry "model\.onnx" is a link/],
    [{ name: 'dev', type: 'character-device', devmajor: 1, devminor: 5 }, /entry "dev" is a character-device/],
    [{ name: 'blk', type: 'block-device', devmajor: 8, devminor: 0 }, /entry "blk" is a block-device/],
    [{ name: 'pipe', type: 'fifo' }, /entry "pipe" is a fifo/],
  ];
  for (const [entry, pattern] of cases) await refused(await packTar([{ name: 'config.json', data: '{}' }, entry]), pattern);

  const unknown = writeTar([{ name: 'odd', data: 'abc' }]);
  unknown[156] = 'Z'.charCodeAt(0);
  fixChecksum(unknown, 0);
  await refused(unknown, /entry "odd" is of an unknown type/);
});

test('tar reader: a name that appears twice is refused, also when spelt differently', async () => {
  await refused(
    await packTar([
      { name: 'config.json', data: '{}' },
      { name: 'config.json', data: '{"b":1}' },
    ]),
    /entry "config\.json" appears twice/,
  );
  await refused(
    await packTar([
      { name: 'pkg/config.json', data: '{}' },
      { name: './pkg//config.json', data: '{}' },
    ]),
    /entry "pkg\/config\.json" appears twice/,
  );
  await refused(
    await packTar([
      { name: 'pkg', type: 'directory' },
      { name: 'pkg', data: 'x' },
    ]),
    /entry "pkg" appears twice/,
  );
});

test('tar reader: truncated archives are refused wherever they end', async () => {
  const archive = await packTar([
    { name: 'config.json', data: '{}' },
    { name: 'model.onnx', data: new Uint8Array(3000).fill(1) },
  ]);
  const modelData = 512 * 3; // config header, config data block, model header
  await refused(archive.subarray(0, modelData + 100), /model\.onnx" claims 3000 bytes but the archive holds 1636 \(truncated\)/);
  await refused(archive.subarray(0, modelData + 2999), /truncated \(the archive ends inside a header or an entry\)/);
  await refused(archive.subarray(0, modelData + 3000), /truncated/); // the entry's padding is missing
  await refused(archive.subarray(0, 512 + 200), /truncated/); // inside config.json's data block
  await refused(archive.subarray(0, 1024 + 100), /truncated/); // inside the second header
  // An archive that ends on an entry boundary without the end-of-archive blocks is whole.
  assert.equal((await readTar(bufferSource(archive.subarray(0, modelData + 3072)))).entries.length, 2);
});

test('tar reader: corrupt headers are refused: checksum, magic, size field; an empty archive too', async () => {
  const archive = writeTar([
    { name: 'config.json', data: '{}' },
    { name: 'model.onnx', data: 'abc' },
  ]);
  const flipped = Uint8Array.from(archive);
  flipped[1024 + 3] ^= 0x01; // the second header's name
  await refused(flipped, /not a readable tar package: checksum mismatch in a header/);

  const v7 = Uint8Array.from(archive);
  v7.fill(0, 257, 265); // no ustar magic
  fixChecksum(v7, 0);
  await refused(v7, /neither ustar nor GNU/);

  const badSize = Uint8Array.from(archive);
  badSize.set(enc.encode('zzzzzzzzzzz\0'), 124);
  fixChecksum(badSize, 0);
  await refused(badSize, /a header declares an invalid size/);

  await refused(new Uint8Array(0), /the archive holds no entries/);
  await refused(new Uint8Array(10240), /the archive holds no entries/);
  await refused(enc.encode('\x1f\x8b'.padEnd(2048, 'z')), /checksum mismatch/);
});

test('read-package: tar-stream refusals reach readModelPackage; readModel re-reads the package and notices a change', async () => {
  const { dir, cleanup } = await scratchDir('lookout-tar-');
  try {
    const model = new Uint8Array(5000).map((_, i) => i % 251);
    const files: PackEntry[] = [
      { name: 'pkg', type: 'directory' },
      { name: 'pkg/config.json', data: JSON.stringify(testConfig('m.onnx')) },
      { name: 'pkg/labels.json', data: JSON.stringify(testLabels(544)) },
      { name: 'pkg/m.onnx', data: model },
    ];
    const path = join(dir, 'rf_detr_edge4.tar');
    await writeFile(path, await packTar(files));
    const pkg = await readModelPackage(path);
    assert.equal(pkg.modelSize, 5000);
    assert.deepEqual(await pkg.readModel(), model);

    await writeFile(path, await packTar([...files.slice(0, 3), { name: 'pkg/m.onnx', data: model.subarray(0, 4000) }]));
    await assert.rejects(pkg.readModel(), (err: unknown) => isLookoutError(err, 'model_package_invalid') && /changed while loading/.test(err.message));

    const linked = join(dir, 'linked.tar');
    await writeFile(linked, await packTar([...files.slice(0, 3), { name: 'pkg/m.onnx', type: 'symlink', linkname: '/dev/zero' }]));
    await assert.rejects(
      readModelPackage(linked),
      (err: unknown) =>
        isLookoutError(err, 'model_package_invalid') && err.message === `${linked}: entry "pkg/m.onnx" is a symlink; a package holds only files and folders`,
    );
  } finally {
    await cleanup();
  }
});
