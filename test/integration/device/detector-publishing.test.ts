import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { DetsMessageSchema } from '../../../core/src/contracts/dets-message.js';
import { TelemetryMessageSchema } from '../../../core/src/contracts/telemetry-message.js';
import { LatestDetsResultSchema } from '../../../core/src/contracts/latest-dets-result.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { recordFor } from '../../support/bus-recorder.js';
import { startPluginDevice } from '../../support/plugin-device.js';
import { waitFor } from '../../support/wait-for.js';

let broker: EmbeddedBroker;
let observer: MqttBus;
const DETECTOR_SET = ['die-temp', 'camera', 'detector'];

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  observer = await MqttBus.connect({ url: broker.url, clientId: 'observer', clean: true });
});
after(async () => {
  await observer.close();
  await broker.close();
});

const collect = (filter: string, ms: number) => recordFor(observer, filter, ms);

test('a layer1 device publishes valid dets and telemetry within 3-15 Hz, telemetry mirrored on shadow/', async () => {
  const device = await startPluginDevice({ brokerUrl: broker.url, plugins: DETECTOR_SET, layer: 'layer1', env: { SIM_SCENARIO: 'people-crossing' } });
  try {
    const [seen, mirror] = await Promise.all([collect(`devices/${device.id}/#`, 2500), collect(`shadow/${device.id}/#`, 2500)]);
    const dets = seen.filter((m) => m.topic.endsWith('/dets'));
    const telemetry = seen.filter((m) => m.topic.endsWith('/telemetry'));
    for (const m of dets) DetsMessageSchema.parse(m.body);
    for (const m of telemetry) TelemetryMessageSchema.parse(m.body);
    for (const [name, list] of [
      ['dets', dets],
      ['telemetry', telemetry],
    ] as const) {
      const hz = list.length / 2.5;
      assert.ok(hz >= 3 && hz <= 15, `${name} at ${hz} Hz is outside the contract's 3-15 Hz`);
    }
    assert.ok(mirror.filter((m) => m.topic === `shadow/${device.id}/telemetry`).length >= telemetry.length - 2, 'telemetry is mirrored');
    const last = dets.at(-1)!.body as { camera_id: string; rf_detr_precomputed: boolean; person_count: number; dets: { c: number }[] };
    assert.equal(last.camera_id, 'front_door');
    assert.equal(last.rf_detr_precomputed, true);
    assert.ok(
      dets.some((m) => (m.body as { person_count: number }).person_count >= 1),
      'the crossing people are counted',
    );
    const lastTelemetry = telemetry.at(-1)!.body as { telemetry: { fps: number; die_temp: number } };
    assert.ok(lastTelemetry.telemetry.fps >= 3 && lastTelemetry.telemetry.fps <= 15, `reported fps ${lastTelemetry.telemetry.fps}`);

    const latest = LatestDetsResultSchema.parse(await device.runtime.tools.call('get_latest_dets', {}));
    assert.equal(latest.person_count, latest.dets.filter((d) => d.c === 0 && d.p >= 0.35).length);
    const status = (await device.runtime.tools.call('get_rfdetr_status', {})) as Record<string, unknown>;
    assert.equal(status.backend, 'sim');
    assert.deepEqual(status.input_shape, [1, 3, 640, 640]);
    assert.equal(status.last_error, null);
    assert.deepEqual([status.detection, status.detection_reason, status.suspended_since], ['running', null, null]);
    assert.ok((status.frames_processed as number) > 5);
    assert.deepEqual((status.classes as unknown[])[0], { id: 0, name: 'person', model_labels: ['person'] });
  } finally {
    await device.stop();
  }
});

test('at layer0 telemetry carries the die temperature without detections, no dets, and the detector tools say they are off at this layer', async () => {
  const device = await startPluginDevice({ brokerUrl: broker.url, plugins: DETECTOR_SET, layer: 'layer0', env: { DIE_TEMP_INTERVAL_MS: '100' } });
  try {
    const seen = await collect(`devices/${device.id}/#`, 800);
    assert.deepEqual(
      seen.filter((m) => m.topic.endsWith('/dets')),
      [],
    );
    const telemetry = seen.filter((m) => m.topic.endsWith('/telemetry')).map((m) => TelemetryMessageSchema.parse(m.body));
    assert.ok(telemetry.length >= 3, `telemetry at each die reading: ${telemetry.length}`);
    const last = telemetry.at(-1)!;
    assert.ok(Math.abs(last.telemetry.die_temp! - 48) <= 0.5, `die_temp ${last.telemetry.die_temp}`);
    assert.deepEqual(
      [last.detections, last.telemetry.fps, last.telemetry.camera_fps, last.telemetry.detection, last.telemetry.thermal_state],
      [[], 0, null, 'off', 'NORMAL'],
    );
    assert.match(last.telemetry.detection_reason!, /no detector is running at layer0|detector is disabled at this layer/);
    assert.deepEqual(
      device.runtime.disabled.map((d) => d.name),
      ['detector'],
    );
    await assert.rejects(device.runtime.tools.call('get_latest_dets', {}), (err: Error & { code: string }) => {
      assert.equal(err.code, 'tool_disabled_at_layer');
      assert.match(
        err.message,
        /"get_latest_dets" is disabled at this layer: its plugin "detector" is off \(enabled from layer1, the active layer is layer0\)/,
      );
      return true;
    });
  } finally {
    await device.stop();
  }
});

test('the person gate: persons under 0.35 are neither published nor counted', async () => {
  // Simulated persons score at most their base confidence (less when partly hidden).
  const env = (confidence: string) => ({
    SIM_DET_PERSON_CONFIDENCE: confidence,
    SIM_DET_CONFIDENCE_SPREAD: '0',
    SIM_DET_FP_RATE: '0',
    SIM_SCENARIO: 'crowd-occlusion',
  });
  const low = await startPluginDevice({ brokerUrl: broker.url, plugins: DETECTOR_SET, layer: 'layer1', env: env('0.34') });
  const mid = await startPluginDevice({ brokerUrl: broker.url, plugins: DETECTOR_SET, layer: 'layer1', env: env('0.5') });
  const high = await startPluginDevice({ brokerUrl: broker.url, plugins: DETECTOR_SET, layer: 'layer1', env: env('0.9') });
  try {
    const seen = await collect('devices/+/dets', 1500);
    const of = (id: string) => seen.filter((m) => m.topic.includes(id)).map((m) => m.body as { person_count: number; dets: { c: number; p: number }[] });
    for (const device of [low, mid, high]) {
      assert.ok(of(device.id).length > 3, 'each device publishes');
      for (const m of of(device.id)) {
        const persons = m.dets.filter((d) => d.c === 0);
        assert.ok(
          persons.every((d) => d.p >= 0.35),
          'no person under the gate is published',
        );
        assert.equal(m.person_count, persons.length);
      }
    }
    assert.ok(of(low.id).every((m) => m.person_count === 0));
    assert.ok(of(high.id).some((m) => m.person_count >= 2));
  } finally {
    await Promise.all([low.stop(), mid.stop(), high.stop()]);
  }
});

test('the detector does not start while the camera is reserved for the encoder, and says so; the device stays up', async () => {
  const device = await startPluginDevice({ brokerUrl: broker.url, plugins: DETECTOR_SET, layer: 'layer1', env: { EDGE_V3_ENCODE_ONLY: '1' } });
  try {
    const detector = device.runtime.plugins.find((p) => p.name === 'detector')!;
    assert.equal(detector.state, 'failed');
    assert.equal(detector.code, 'config_invalid');
    assert.match(detector.message!, /EDGE_V3_ENCODE_ONLY="1" .* invalid for plugin "detector": the camera is reserved for the encoder/);
  } finally {
    await device.stop();
  }
});

test('stop does not wait for a broker that went away: the frame in flight ends, its publish is abandoned', async () => {
  const outage = await EmbeddedBroker.start({ port: 0 });
  const device = await startPluginDevice({ brokerUrl: outage.url, plugins: DETECTOR_SET, layer: 'layer1' });
  const patience = new AbortController();
  try {
    const processed = async () => ((await device.runtime.tools.call('get_rfdetr_status', {})) as { frames_processed: number }).frames_processed;
    while ((await processed()) < 3) await sleep(20);
    await outage.close();
    await waitFor(() => !device.bus.connected, 'the device to notice the broker is gone');
    // Offline, a QoS 1 publish stays pending until the broker returns, which it never will here.
    await sleep(300);
    const outcome = await Promise.race([
      device.runtime.stop().then(() => 'stopped'),
      sleep(5000, 'still waiting for the broker', { signal: patience.signal }).catch(() => 'aborted'),
    ]);
    assert.equal(outcome, 'stopped');
  } finally {
    patience.abort();
    await device.bus.close(); // settles a publish a stuck loop still waits on, so the stop below ends
    await device.stop();
  }
});
