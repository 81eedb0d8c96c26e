import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prepareModel } from '../../../../../plugins/detector/src/model/prepare-model.js';
import { readModelPackage } from '../../../../../plugins/detector/src/model/read-package.js';
import { testConfig, writePackage } from '../../../../support/onnx-model.js';
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
