/**
 * A thermal suspension seen from the fleet: a layer 4 device whose die crosses THERMAL_CRITICAL stops
 * detecting; its telemetry and status announce it, the hub's latest entry says `detection:
 * "suspended"` with no count (never yesterday's count as live, never an empty scene) and since when,
 * and the contract verifier reports the silence of dets as the announced reason, not a failure.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { verifyContract } from '../../../operator/src/contract-verifier.js';
import { startPluginDevice, type PluginDevice } from '../../support/plugin-device.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

let hub: RunningHub;
let device: PluginDevice;
let dir: string;
const HOT_AT_S = 2;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lookout-suspension-'));
  const script = join(dir, 'temp.json');
  // Cool while the hub sees people counted, then past THERMAL_CRITICAL_C (85) for good.
  await writeFile(
    script,
    JSON.stringify([
      { atS: 0, celsius: 60 },
      { atS: HOT_AT_S, celsius: 60 },
      { atS: HOT_AT_S + 0.05, celsius: 92 },
    ]),
  );
  hub = await testHub();
  // The device's hello, as lookout-edge would send it: the hub keeps entries of devices it knows only.
  const greeter = await mqttClient(hub.brokerUrl);
  await publish(greeter, 'devices/cam-hot/hello', msg.hello('cam-hot', ['127.0.0.1'], 8765));
  await endClient(greeter);
  device = await startPluginDevice({
    brokerUrl: hub.brokerUrl,
    id: 'cam-hot',
    plugins: ['die-temp', 'camera', 'detector', 'thermal', 'status'],
    layer: 'layer4',
    env: { SIM_TEMP_SCRIPT: script, DIE_TEMP_INTERVAL_MS: '50', SIM_SCENARIO: 'crowd-occlusion', STATUS_INTERVAL_MS: '500' },
  });
});

after(async () => {
  await device?.stop();
  await hub?.close();
  await rm(dir, { recursive: true, force: true });
});

type Entry = { detection?: string | null; person_count: number | null; dets: unknown[]; suspended_since?: string | null; stale: boolean; status: any };
const entry = async (): Promise<Entry | undefined> => (await api(hub.url, '/fleet/mqtt/latest?device=cam-hot')).body.devices?.['cam-hot'] as Entry | undefined;

test('the hub says suspended, with no count and since when, and the verifier counts the announced suspension as a reason', async () => {
  const counting = await waitFor('a counted scene while the die is cool', async () => {
    const e = await entry();
    return e?.detection === 'running' && typeof e.person_count === 'number' && e.person_count > 0 ? e : undefined;
  });
  assert.ok(counting.dets.length > 0);

  const suspended = await waitFor('the suspension in /fleet/mqtt/latest', async () => {
    const e = await entry();
    return e?.detection === 'suspended' ? e : undefined;
  });
  assert.equal(suspended.person_count, null, 'no count while suspended: not yesterday’s as live');
  assert.deepEqual(suspended.dets, []);
  assert.equal(suspended.stale, false);
  assert.ok(suspended.suspended_since && Date.parse(suspended.suspended_since) > 0, `suspended_since ${suspended.suspended_since}`);
  const withStatus = await waitFor('the status announcing it', async () => {
    const e = await entry();
    return e?.status?.detection_suspended ? e : undefined;
  });
  assert.equal(withStatus.status.thermal_state, 'THERMAL_CRITICAL');
  // The script ramps 60 → 92 °C in 50 ms: the reading that crossed THERMAL_CRITICAL_C (85) may be any on the way.
  const at = /THERMAL_CRITICAL at (\d+(?:\.\d+)?)/.exec(withStatus.status.detection_suspended.reason);
  assert.ok(at && Number(at[1]) >= 85, withStatus.status.detection_suspended.reason);

  const bus = await MqttBus.connect({ url: hub.brokerUrl, clientId: 'verifier', clean: true });
  try {
    const report = await verifyContract({ bus, deviceId: 'cam-hot', durationMs: 2000 });
    const dets = report.topics.find((t) => t.topic.endsWith('/dets'))!;
    assert.equal(dets.samples, 0);
    assert.deepEqual(dets.failures, [], JSON.stringify(report));
    assert.match(dets.reasons?.join(' ') ?? '', /detection suspended for [\d.]+ s of the sample \(since .*\): THERMAL_CRITICAL/);
    assert.equal(report.passed, true, JSON.stringify(report));
    const telemetry = report.topics.find((t) => t.topic.endsWith('/telemetry'))!;
    assert.ok(telemetry.rate_hz >= 3, 'telemetry goes on while suspended');
  } finally {
    await bus.close();
  }
});
