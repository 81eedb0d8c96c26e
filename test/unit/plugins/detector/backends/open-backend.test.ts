import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { openBackend } from '../../../../../plugins/detector/src/backends/open-backend.js';
import { DetectorConfigSchema } from '../../../../../plugins/detector/src/config.js';
import { buildTestDetrModel, testConfig, writePackage } from '../../../../support/onnx-model.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

test("without RF_DETR_BACKEND, the package's config.json chooses: an onnx package without labels.json runs on onnx", async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const model = buildTestDetrModel({ height: 544, width: 544, queries: 4, classes: 23 });
    await writePackage(`${dir}/models`, { modelName: 'rf_detr.onnx', model: model.bytes, config: testConfig('rf_detr.onnx', 'onnx') });
    const config = DetectorConfigSchema.parse({ RF_DETR_MODEL_PATH: '/models/rf_detr_edge4.tar' });
    const { backend, modelPath } = await openBackend(config, dir);
    try {
      assert.equal(modelPath, `${dir}/models/rf_detr_edge4.tar`);
      assert.equal(backend.name, 'onnx');
      assert.deepEqual(backend.status().inputShape, [1, 3, 544, 544]);
      assert.equal(backend.status().classMap, 'production');
    } finally {
      await backend.close();
    }

    // RF_DETR_BACKEND still wins, and a package it cannot run is refused, naming the one that can.
    const forced = DetectorConfigSchema.parse({ RF_DETR_MODEL_PATH: '/models/rf_detr_edge4.tar', RF_DETR_BACKEND: 'snpe' });
    await assert.rejects(openBackend(forced, dir), (err: unknown) => {
      assert.ok(isLookoutError(err, 'model_package_invalid'), String(err));
      assert.match(err.message, /runs \.dlc models .* RF_DETR_BACKEND=onnx/);
      return true;
    });
  } finally {
    await cleanup();
  }
});

test('SIM_DET_CLASS_MAP picks the weights the sim back-end simulates; production by default; anything else is refused naming the choices', async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    for (const [env, map, plates] of [
      [{}, 'production', false],
      [{ SIM_DET_CLASS_MAP: 'omni15' }, 'omni15', true],
    ] as const) {
      const { backend, modelPath } = await openBackend(DetectorConfigSchema.parse(env), dir);
      try {
        assert.equal(modelPath, null);
        assert.equal(backend.name, 'sim');
        assert.equal(backend.status().classMap, map);
        assert.equal(
          backend.status().classes.some((c) => c.id === 14 && c.name === 'license_plate'),
          plates,
        );
      } finally {
        await backend.close();
      }
    }
  } finally {
    await cleanup();
  }
  const bad = DetectorConfigSchema.safeParse({ SIM_DET_CLASS_MAP: 'omni' });
  assert.ok(!bad.success);
  assert.match(bad.error.issues[0].message, /production.*omni15/);
});
