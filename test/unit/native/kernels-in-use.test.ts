/**
 * Which frame kernels a process runs, and that the plugins say so: the native addon normally (the
 * build npm install made), the TypeScript twins under LOOKOUT_NATIVE=0 (twins-suite.test.ts runs
 * this file that way too). A device with the detector (onnx back-end) and the tracker reports it in
 * get_rfdetr_status and publishes detections either way.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { CropResizer, BgrResizer, nativeStatus } from '../../../native/ts/index.js';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { DetrDecoder } from '../../../plugins/detector/src/model/decode.js';
import { Preprocessor } from '../../../plugins/detector/src/model/preprocess.js';
import { IouKernel } from '../../../plugins/tracker/src/geometry/iou-kernel.js';
import { buildTestDetrModel, testLabels, writePackage } from '../../support/onnx-model.js';
import { startPluginDevice } from '../../support/plugin-device.js';

const twins = process.env.LOOKOUT_NATIVE === '0';
const expected = twins ? 'typescript' : 'native';

let broker: EmbeddedBroker;
before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
});
after(async () => {
  await broker.close();
});

test(`the process runs the ${expected} kernels, every front the same`, () => {
  const status = nativeStatus();
  assert.equal(status.implementation, expected, `reason: ${status.reason}`);
  if (twins) {
    assert.equal(status.disabled, true);
    assert.match(status.reason ?? '', /LOOKOUT_NATIVE=0/);
  } else {
    assert.equal(status.reason, null);
    assert.match(status.path ?? '', /lookout_native/);
  }
  const sizes = { srcWidth: 64, srcHeight: 48, dstWidth: 32, dstHeight: 32 };
  for (const front of [new Preprocessor(sizes), new DetrDecoder(), new CropResizer(), new BgrResizer(sizes), new IouKernel()]) {
    assert.equal(front.implementation, expected, front.constructor.name);
  }
});

test('a device with the detector and the tracker says which kernels run and detects with them', async () => {
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: ['die-temp', 'camera', 'detector', 'tracker'],
    layer: 'layer2',
    env: { RF_DETR_BACKEND: 'onnx', RF_DETR_MODEL_PATH: '/data/models/rf_detr_edge4.tar', RF_DETR_STRIDE_FPS: '10' },
    prepare: async (dataDir) => {
      const model = buildTestDetrModel({ height: 544, width: 544, queries: 16, classes: 23, seed: 3, boxesName: 'dets', logitsName: 'labels', logitBias: 2 });
      await writePackage(join(dataDir, 'data', 'models'), { modelName: 'rf_detr_qcs8550.onnx', model: model.bytes, labels: testLabels(544) });
    },
  });
  try {
    const status = () => device.runtime.tools.call('get_rfdetr_status', {}) as Promise<{ kernels: unknown; frames_processed: number; stages: string[] }>;
    const first = await status();
    assert.deepEqual(first.kernels, { implementation: expected, reason: twins ? 'LOOKOUT_NATIVE=0 forces the TypeScript kernels' : null });
    assert.deepEqual(first.stages, ['tracker']);
    const deadline = Date.now() + 15_000;
    while ((await status()).frames_processed < 3) {
      assert.ok(Date.now() < deadline, 'three frames detected within 15 s');
      await sleep(50);
    }
    const latest = (await device.runtime.tools.call('get_latest_dets', {})) as { dets: unknown[] };
    assert.ok(latest.dets.length > 0, 'the model scores above the threshold everywhere (logit bias)');
  } finally {
    await device.stop();
  }
});
