import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { DetsMessageSchema, type DetsMessage } from '../../../core/src/contracts/dets-message.js';
import type { LayerId } from '../../../core/src/plugin/manifest.js';
import { BusRecorder, recordFor } from '../../support/bus-recorder.js';
import { buildDepthModel } from '../../support/depth-onnx-model.js';
import { startPluginDevice } from '../../support/plugin-device.js';

let broker: EmbeddedBroker;
let observer: MqttBus;
const PLUGINS = ['die-temp', 'camera', 'detector', 'tracker', 'depth'];

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  observer = await MqttBus.connect({ url: broker.url, clientId: 'layers-observer', clean: true });
});
after(async () => {
  await observer.close();
  await broker.close();
});

/** dets messages of a device at a layer, over about 1.5 s of the crossing scenario. */
async function detsAt(layer: LayerId, env: Record<string, string> = {}): Promise<{ dets: DetsMessage[]; disabled: string[]; stages: unknown }> {
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: PLUGINS,
    layer,
    env: { SIM_SCENARIO: 'people-crossing', SIM_DET_FP_RATE: '0', ...env },
  });
  try {
    const seen = (await recordFor(observer, `devices/${device.id}/dets`, 1500)).map((m) => DetsMessageSchema.parse(m.body));
    const status = (await device.runtime.tools.call('get_rfdetr_status', {})) as { stages: unknown };
    return { dets: seen, disabled: device.runtime.disabled.map((d) => d.name), stages: status.stages };
  } finally {
    await device.stop();
  }
}

const all = (msgs: DetsMessage[]) => msgs.flatMap((m) => m.dets);

test('layer1: detections without track_id or x, y, z; tracker and depth are off', async () => {
  const r = await detsAt('layer1');
  assert.deepEqual(r.disabled.sort(), ['depth', 'tracker']);
  assert.deepEqual(r.stages, []);
  assert.ok(all(r.dets).length > 5);
  assert.ok(all(r.dets).every((d) => d.track_id === undefined && d.x === undefined && d.z === undefined));
});

test('layer2: track_id appears, x, y, z do not', async () => {
  const r = await detsAt('layer2');
  assert.deepEqual(r.disabled, ['depth']);
  assert.deepEqual(r.stages, ['tracker']);
  const dets = all(r.dets);
  assert.ok(
    dets.some((d) => Number.isInteger(d.track_id)),
    'tracked detections are published',
  );
  assert.ok(dets.every((d) => d.x === undefined && d.y === undefined && d.z === undefined));
  // Two people walk in this scene: two ids, not one per frame.
  const ids = new Set(
    dets
      .filter((d) => d.c === 0)
      .map((d) => d.track_id)
      .filter((id) => id !== undefined),
  );
  assert.ok(ids.size >= 1 && ids.size <= 2, `track ids ${[...ids].join(', ')}`);
});

test('layer3: track_id and x, y, z (sim depth from ground truth when the model file is absent)', async () => {
  const r = await detsAt('layer3', { MONO_DEPTH_MODEL_PATH: '/data/models/mono_depth.onnx' });
  assert.deepEqual(r.disabled, []);
  assert.deepEqual(r.stages, ['tracker', 'depth']);
  const persons = all(r.dets).filter((d) => d.c === 0);
  assert.ok(persons.length > 5);
  for (const d of persons) {
    // The scenario's people walk 5.6 to 7.8 m from the camera.
    assert.ok(d.z !== undefined && d.z > 5 && d.z < 8.5, `z ${d.z}`);
    assert.ok(Number.isFinite(d.x) && Number.isFinite(d.y));
  }
  assert.ok(persons.some((d) => Number.isInteger(d.track_id)));
});

test('layer2 with TRACKER_ENABLE=0: loaded, but no stage and no track_id', async () => {
  const r = await detsAt('layer2', { TRACKER_ENABLE: '0' });
  assert.deepEqual(r.stages, []);
  assert.ok(all(r.dets).every((d) => d.track_id === undefined));
});

test('layer3 with a depth model slow to load: not one dets message leaves without x, y, z', async () => {
  const id = 'cam-slow-depth';
  const recorder = new BusRecorder();
  const off = await observer.subscribe(`devices/${id}/dets`, recorder.handler);
  let feeding: Promise<void> | undefined;
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    id,
    plugins: PLUGINS,
    layer: 'layer3',
    env: { SIM_SCENARIO: 'people-crossing', SIM_DET_FP_RATE: '0', MONO_DEPTH_BACKEND: 'onnx', MONO_DEPTH_MODEL_PATH: '/data/models/mono_depth.onnx' },
    // The model comes through a FIFO 400 ms after depth starts reading it (slow flash, a 100 MB file):
    // the detector, which started first, runs frames meanwhile.
    prepare: async (dataDir) => {
      const path = join(dataDir, 'data', 'models', 'mono_depth.onnx');
      await mkdir(join(dataDir, 'data', 'models'), { recursive: true });
      execFileSync('mkfifo', [path]);
      feeding = sleep(400).then(() => writeFile(path, buildDepthModel({ height: 64, width: 64 }).bytes));
    },
  });
  try {
    await feeding;
    await sleep(800);
    const dets = recorder.messages.map((m) => DetsMessageSchema.parse(m.body));
    const persons = all(dets).filter((d) => d.c === 0);
    assert.ok(persons.length > 5, `${persons.length} person detections`);
    assert.deepEqual(
      persons.filter((d) => d.z === undefined),
      [],
      'detections published before the depth model was loaded',
    );
  } finally {
    await off();
    await device.stop();
  }
});
