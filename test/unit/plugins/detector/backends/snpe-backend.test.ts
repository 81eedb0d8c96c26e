import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SnpeBackend, type SnpeBinding } from '../../../../../plugins/detector/src/backends/snpe-backend.js';
import { PRODUCTION_LABELS } from '../../../../../plugins/detector/src/model/class-maps.js';
import { seededRandom, testConfig, testFrameBytes, writePackage } from '../../../../support/onnx-model.js';
import { scratchDir } from '../../../../support/scratch-dir.js';

test("the spec's package (.dlc and config.json, no labels.json) loads on the DSP at the DLC's own input size", async () => {
  const { dir, cleanup } = await scratchDir('lookout-detector-');
  try {
    const path = await writePackage(dir, {
      modelName: 'rf_detr_qcs8550.dlc',
      model: Uint8Array.from([1, 2, 3, 4]),
      config: testConfig('rf_detr_qcs8550.dlc', 'snpe'),
    });
    const Q = 5;
    const C = 23;
    const rnd = seededRandom(3);
    const boxes = Float32Array.from({ length: Q * 4 }, () => 0.1 + 0.5 * rnd());
    const logits = Float32Array.from({ length: Q * C }, () => -5 + 7 * rnd());
    let inputLength = 0;
    // Test double for the on-chip runtime, which this machine does not have: the custom compile's 544 input.
    const dsp: SnpeBinding = {
      load: () =>
        Promise.resolve({
          inputShape: [1, 3, 544, 544],
          execute(input) {
            inputLength = input.length;
            return Promise.resolve({ boxes, logits, queries: Q, classes: C });
          },
          release() {},
        }),
    };
    const b = await SnpeBackend.create({ modelPath: path, env: {}, binding: dsp, scoreThreshold: 0.3 });
    try {
      const dets = await b.detect({ index: 0, timestampMs: 0, width: 640, height: 640, format: 'bgr888', data: testFrameBytes() });
      assert.ok(dets.length > 0);
      assert.equal(inputLength, 3 * 544 * 544, 'preprocessing targets the DLC input');
      const status = b.status();
      assert.equal(status.classMap, 'production');
      assert.equal(status.packageVersion, null);
      assert.deepEqual(status.inputShape, [1, 3, 544, 544]);
      assert.deepEqual(
        status.classes.map((c) => [c.id, c.name]),
        PRODUCTION_LABELS.map((name, id) => [id, name]),
      );
      const ids = new Set(status.classes.map((c) => c.id));
      for (const d of dets) assert.ok(ids.has(d.c), `det class ${d.c} is listed in the status`);
    } finally {
      await b.close();
    }
  } finally {
    await cleanup();
  }
});
