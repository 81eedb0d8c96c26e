import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareModel } from '../../../../../plugins/detector/src/model/prepare-model.js';
import { truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { METADATA_MAX_BYTES, readModelPackage } from '../../../../../plugins/detector/src/model/read-package.js';
import { testConfig, writeBareModel, writePackage } from '../../../../support/onnx-model.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

const dlc = Uint8Array.from([1, 2, 3, 4]);

test('a package as spec 02 ships it (.dlc and config.json, no labels.json) reads, on the production map', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const path = await writePackage(dir, { modelName: 'rf_detr_qcs8550.dlc', model: dlc, config: testConfig('rf_detr_qcs8550.dlc', 'snpe') });
    const pkg = await readModelPackage(path);
    assert.equal(pkg.kind, 'tar');
    assert.equal(pkg.modelFormat, 'dlc');
    assert.equal(pkg.config?.backend, 'snpe');
    assert.equal(pkg.labels, null);
    const prepared = await prepareModel(path, 'snpe', pkg);
    assert.equal(prepared.pkg, pkg, 'a package already read is not listed again');
    assert.equal(prepared.classMap.name, 'production');
    assert.equal(prepared.declaredShape, null);
  } finally {
    await cleanup();
  }
});

test('a labels.json past the metadata bound is refused by its size, before it is read (one of 500 MB took 1.6 GB and the start timeout)', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const bare = await writeBareModel(dir, 'model.onnx', dlc, { classes: ['person'] });
    await truncate(join(dir, 'labels.json'), 500 * 1024 * 1024); // sparse: no disk, and reading it whole would take 500 MB
    await assert.rejects(readModelPackage(bare), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'model_package_invalid');
      assert.match(err.message, /labels\.json is 524288000 bytes; a package's metadata files are at most \d+ bytes/);
      return true;
    });
    const tar = await writePackage(join(dir, 'tar'), {
      modelName: 'rf_detr_qcs8550.dlc',
      model: dlc,
      config: testConfig('rf_detr_qcs8550.dlc', 'snpe'),
      labels: { pad: 'x'.repeat(METADATA_MAX_BYTES) },
    });
    await assert.rejects(readModelPackage(tar), /labels\.json is \d+ bytes; a package's metadata files are at most/);
  } finally {
    await cleanup();
  }
});
