import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { DetsMessageSchema } from '../../../core/src/contracts/dets-message.js';
import { LookoutError } from '../../../core/src/errors/lookout-error.js';
import { recordFor } from '../../support/bus-recorder.js';
import { buildTestDetrModel, testConfig, testLabels, writePackage } from '../../support/onnx-model.js';
import { startPluginDevice } from '../../support/plugin-device.js';

let broker: EmbeddedBroker;
let observer: MqttBus;
const PLUGINS = ['die-temp', 'camera', 'detector'];

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  observer = await MqttBus.connect({ url: broker.url, clientId: 'onnx-observer', clean: true });
});
after(async () => {
  await observer.close();
  await broker.close();
});

/** A custom 544 package in the device's /data/models, as push_device_models would leave it. */
function withPackage(modelSize: number, declaredSize: number) {
  return async (dataDir: string) => {
    const model = buildTestDetrModel({
      height: modelSize,
      width: modelSize,
      queries: 16,
      classes: 23,
      seed: 3,
      boxesName: 'dets',
      logitsName: 'labels',
      logitBias: 2,
    });
    await writePackage(join(dataDir, 'data', 'models'), { modelName: 'rf_detr_qcs8550.onnx', model: model.bytes, labels: testLabels(declaredSize) });
  };
}

test('a device runs the onnx back-end on a package under /data/models and publishes its detections', async () => {
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: PLUGINS,
    layer: 'layer1',
    env: { RF_DETR_BACKEND: 'onnx', RF_DETR_MODEL_PATH: '/data/models/rf_detr_edge4.tar', RF_DETR_STRIDE_FPS: '5' },
    prepare: withPackage(544, 544),
  });
  try {
    const status = (await device.runtime.tools.call('get_rfdetr_status', {})) as Record<string, unknown>;
    assert.equal(status.backend, 'onnx');
    assert.equal(status.model_path, join(device.dataDir, 'data/models/rf_detr_edge4.tar'));
    assert.deepEqual(status.input_shape, [1, 3, 544, 544]);
    assert.equal(status.package_version, '2025.06.1');
    assert.equal(status.ontology_hash, 'sha256:3f1c0de5');
    assert.deepEqual((status.classes as unknown[])[0], { id: 0, name: 'person', model_labels: ['person'] });
    const seen = await recordFor(observer, `devices/${device.id}/dets`, 1500);
    assert.ok(seen.length >= 3, `dets published: ${seen.length}`);
    for (const m of seen) {
      const dets = DetsMessageSchema.parse(JSON.parse(m.payload.toString()));
      assert.ok(dets.dets.length > 0, 'the model scores above the threshold everywhere (logit bias)');
      for (const d of dets.dets) {
        assert.ok(d.b[0] >= 0 && d.b[2] <= 640 && d.b[1] >= 0 && d.b[3] <= 640, 'boxes in pixels of the 640 frame');
        assert.ok(d.c >= 0 && d.c <= 22);
      }
    }
  } finally {
    await device.stop();
  }
});

test('a package whose declared shape disagrees with its model fails the detector, naming the shapes; the device stays up and says why', async () => {
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: PLUGINS,
    layer: 'layer1',
    env: { RF_DETR_BACKEND: 'onnx', RF_DETR_MODEL_PATH: '/data/models/rf_detr_edge4.tar' },
    prepare: withPackage(640, 544),
  });
  try {
    const detector = device.runtime.plugins.find((p) => p.name === 'detector')!;
    assert.equal(detector.state, 'failed');
    assert.equal(detector.code, 'model_shape_mismatch');
    assert.match(detector.message!, /544/);
    assert.match(detector.message!, /640/);
    const status = (await device.runtime.tools.call('get_rfdetr_status', {})) as { model_error: { code: string; message: string } | null };
    assert.equal(status.model_error?.code, 'model_shape_mismatch');
    await assert.rejects(device.runtime.tools.call('get_latest_dets', {}), (err: unknown) => err instanceof LookoutError && err.code === 'plugin_failed');
    assert.equal(device.runtime.plugins.find((p) => p.name === 'camera')!.state, 'ok');
  } finally {
    await device.stop();
  }
});

test('the fleet package (.dlc for the DSP) picks snpe, which refuses to load here with a clear "not available" error', async () => {
  // The DLC bytes are never read here: the DSP runtime is what is missing.
  const prepare = (dataDir: string) =>
    writePackage(join(dataDir, 'data', 'models'), {
      modelName: 'rf_detr_qcs8550.dlc',
      model: new Uint8Array(64),
      config: testConfig('rf_detr_qcs8550.dlc', 'snpe'),
      labels: testLabels(544),
    }).then(() => undefined);
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: PLUGINS,
    layer: 'layer1',
    env: { RF_DETR_EDGE4_MODEL: '/data/models/rf_detr_edge4.tar' },
    prepare,
  });
  try {
    const detector = device.runtime.plugins.find((p) => p.name === 'detector')!;
    assert.equal(detector.state, 'failed');
    assert.equal(detector.code, 'backend_unavailable');
    assert.match(detector.message!, /not available here/i);
  } finally {
    await device.stop();
  }
});
