import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import { StatusMessageSchema, type StatusMessage } from '../../../core/src/contracts/status-message.js';
import { TelemetryMessageSchema } from '../../../core/src/contracts/telemetry-message.js';
import { DetsMessageSchema } from '../../../core/src/contracts/dets-message.js';
import { startPluginDevice } from '../../support/plugin-device.js';
import { ThermalGovernorToken } from '../../../plugins/thermal/src/service.js';

let broker: EmbeddedBroker;
let observer: MqttBus;
let dir: string;

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  observer = await MqttBus.connect({ url: broker.url, clientId: 'thermal-observer', clean: true });
  dir = await mkdtemp(join(tmpdir(), 'lookout-thermal-'));
});
after(async () => {
  await observer.close();
  await broker.close();
  await rm(dir, { recursive: true, force: true });
});

// Up through every state and down again, with two holds that only hysteresis explains: 82 C after
// CRITICAL (above 85 - 5) stays CRITICAL, 72 C after WARN (above 75 - 5) stays WARN.
const SCRIPT = [
  { atS: 0, celsius: 60 },
  { atS: 1.2, celsius: 60 },
  { atS: 1.25, celsius: 80 },
  { atS: 1.9, celsius: 80 },
  { atS: 1.95, celsius: 90 },
  { atS: 2.6, celsius: 90 },
  { atS: 2.65, celsius: 82 },
  { atS: 3.2, celsius: 82 },
  { atS: 3.25, celsius: 78 },
  { atS: 3.8, celsius: 78 },
  { atS: 3.85, celsius: 72 },
  { atS: 4.4, celsius: 72 },
  { atS: 4.45, celsius: 60 },
];

test('a temperature script drives the governor through every state; status, dets and telemetry follow', async () => {
  const script = join(dir, 'temp.json');
  await writeFile(script, JSON.stringify(SCRIPT));
  const id = 'cam-thermal';
  const statuses: Array<{ at: number; body: StatusMessage }> = [];
  const dets: number[] = [];
  const telemetry: Array<{ at: number; detections: unknown[] }> = [];
  const throttleSeen: Array<{ state: string; stride: number; suspended: boolean }> = [];
  let device: Awaited<ReturnType<typeof startPluginDevice>> | undefined;
  const off = await observer.subscribe(`devices/${id}/#`, (topic, payload) => {
    const body = JSON.parse(payload.toString());
    const at = Date.now();
    if (topic.endsWith('/status')) {
      statuses.push({ at, body: StatusMessageSchema.parse(body) });
    } else if (topic.endsWith('/dets')) {
      DetsMessageSchema.parse(body);
      dets.push(at);
    } else if (topic.endsWith('/telemetry')) {
      telemetry.push({ at, detections: TelemetryMessageSchema.parse(body).detections });
    }
  });
  try {
    device = await startPluginDevice({
      brokerUrl: broker.url,
      id,
      plugins: ['die-temp', 'camera', 'detector', 'thermal', 'status'],
      layer: 'layer4',
      env: { SIM_TEMP_SCRIPT: script, DIE_TEMP_INTERVAL_MS: '40', SIM_SCENARIO: 'crowd-occlusion' },
    });
    // The governor throttles the detector before it tells its listeners: read the detector's
    // throttle at each change, in the same turn, so that a loaded machine cannot reorder them.
    const governor = device.runtime.service(ThermalGovernorToken)!;
    const readThrottle = async (state: string) => {
      const r = (await device!.runtime.tools.call('get_rfdetr_status', {})) as { stride_fps: number; detection: string };
      throttleSeen.push({ state, stride: r.stride_fps, suspended: r.detection === 'suspended' });
    };
    const pending: Promise<void>[] = [readThrottle(governor.state() ?? 'unknown')];
    governor.onChange((state) => void pending.push(readThrottle(state)));
    await new Promise((r) => setTimeout(r, 5000));
    await Promise.all(pending);
    const states = statuses.map((s) => s.body.thermal_state).filter((s, i, a) => i === 0 || s !== a[i - 1]);
    assert.deepEqual(states, ['NORMAL', 'THERMAL_WARN', 'THERMAL_CRITICAL', 'THERMAL_WARN', 'NORMAL']);
    assert.ok(statuses.every((s) => s.body.state === 'online'));
    const critical = statuses.find((s) => s.body.thermal_state === 'THERMAL_CRITICAL')!;
    assert.ok(critical.body.die_temp_c! >= 85, `entered CRITICAL at ${critical.body.die_temp_c} C`);
    const afterCritical = statuses[statuses.indexOf(critical) + 1];
    assert.ok(afterCritical.body.die_temp_c! < 80, `left CRITICAL at ${afterCritical.body.die_temp_c} C, below 85 - 5`);
    const lastWarn = [...statuses].reverse().find((s) => s.body.thermal_state === 'THERMAL_WARN')!;
    const normal = statuses[statuses.indexOf(lastWarn) + 1];
    assert.ok(normal.body.die_temp_c! < 70, `back to NORMAL at ${normal.body.die_temp_c} C, below 75 - 5`);

    // While CRITICAL: no dets (allowing one frame already in flight), telemetry goes on, empty.
    const inside = <T extends { at: number } | number>(xs: T[]) =>
      xs.filter((x) => {
        const at = typeof x === 'number' ? x : x.at;
        return at > critical.at + 300 && at < afterCritical.at;
      });
    assert.equal(inside(dets).length, 0, 'no dets while CRITICAL');
    const quietTelemetry = inside(telemetry);
    assert.ok(quietTelemetry.length >= 3, `telemetry while CRITICAL: ${quietTelemetry.length}`);
    assert.ok(quietTelemetry.every((t) => t.detections.length === 0));
    assert.ok(
      dets.some((at) => at > normal.at),
      'dets resume after the die cools',
    );

    assert.deepEqual(
      throttleSeen.filter((t, i, a) => i === 0 || t.state !== a[i - 1].state),
      [
        { state: 'NORMAL', stride: 10, suspended: false },
        { state: 'THERMAL_WARN', stride: 5, suspended: false },
        { state: 'THERMAL_CRITICAL', stride: 10, suspended: true },
        { state: 'THERMAL_WARN', stride: 5, suspended: false },
        { state: 'NORMAL', stride: 10, suspended: false },
      ],
    );
  } finally {
    await off();
    await device?.stop();
  }
});

test('bad thresholds fail the governor with a message naming the keys; the detector keeps running', async () => {
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: ['die-temp', 'camera', 'detector', 'thermal'],
    layer: 'layer4',
    env: { THERMAL_WARN_C: '90', THERMAL_CRITICAL_C: '85' },
  });
  try {
    const thermal = device.runtime.plugins.find((p) => p.name === 'thermal')!;
    assert.equal(thermal.state, 'failed');
    assert.match(thermal.message!, /THERMAL_WARN_C/);
    assert.match(thermal.message!, /THERMAL_CRITICAL_C/);
    assert.equal(device.runtime.plugins.find((p) => p.name === 'detector')!.state, 'ok');
  } finally {
    await device.stop();
  }
});

test('THERMAL_WARN never raises the detector above a stride configured lower than the warn stride', async () => {
  const script = join(dir, 'warm.json');
  await writeFile(script, JSON.stringify([{ atS: 0, celsius: 80 }]));
  const device = await startPluginDevice({
    brokerUrl: broker.url,
    plugins: ['die-temp', 'camera', 'detector', 'thermal'],
    layer: 'layer4',
    env: { SIM_TEMP_SCRIPT: script, DIE_TEMP_INTERVAL_MS: '40', RF_DETR_STRIDE_FPS: '3', THERMAL_WARN_STRIDE_FPS: '5' },
  });
  try {
    const governor = device.runtime.service(ThermalGovernorToken)!;
    assert.equal(governor.state(), 'THERMAL_WARN');
    const status = (await device.runtime.tools.call('get_rfdetr_status', {})) as { stride_fps: number; detection: string };
    assert.deepEqual({ stride: status.stride_fps, detection: status.detection }, { stride: 3, detection: 'running' });
  } finally {
    await device.stop();
  }
});
