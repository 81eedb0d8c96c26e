import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EmbeddedBroker } from '../../../hub/src/broker/embedded-broker.js';
import { MqttBus } from '../../../lib/mqtt/mqtt-bus.js';
import type { ContractReport } from '../../../operator/src/contract-verifier.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startPluginDevice, type PluginDevice } from '../../support/plugin-device.js';

const run = promisify(execFile);
let broker: EmbeddedBroker;
let healthy: PluginDevice;
let slow: PluginDevice;
let faulty: MqttBus;
let faultyTimer: NodeJS.Timeout;

before(async () => {
  broker = await EmbeddedBroker.start({ port: 0 });
  const plugins = ['die-temp', 'camera', 'detector'];
  healthy = await startPluginDevice({ brokerUrl: broker.url, plugins, layer: 'layer1' });
  slow = await startPluginDevice({ brokerUrl: broker.url, plugins, layer: 'layer1', env: { RF_DETR_STRIDE_FPS: '1' } });
  // A device whose firmware sends every other message with the wrong types, at 10 Hz.
  faulty = await MqttBus.connect({ url: broker.url, clientId: 'faulty', clean: true });
  let n = 0;
  faultyTimer = setInterval(() => {
    const bad = n++ % 2 === 1;
    const timestamp = new Date().toISOString();
    const dets = bad ? 'none' : [{ c: 0, p: 0.9, b: [1, 2, 30, 60] }];
    faulty
      .publish('devices/faulty/dets', JSON.stringify({ timestamp, camera_id: 'x', dets, person_count: bad ? -1 : 1, rf_detr_precomputed: true }))
      .catch(() => undefined); // in flight at close: the test is over
    faulty
      .publish(
        'devices/faulty/telemetry',
        bad ? '{not json' : JSON.stringify({ timestamp, camera_id: 'x', detections: dets, telemetry: { die_temp: 50, fps: 10 } }),
      )
      .catch(() => undefined); // in flight at close: the test is over
  }, 100);
});

after(async () => {
  clearInterval(faultyTimer);
  await Promise.all([healthy.stop(), slow.stop(), faulty.close()]);
  await broker.close();
});

async function verify(deviceId: string): Promise<{ code: number; report: ContractReport }> {
  const args = [
    join(packageRoot(), 'bin', 'lookout.js'),
    'verify-contract',
    '--mqtt_host',
    '127.0.0.1',
    '--mqtt_port',
    String(broker.port),
    '--device_id',
    deviceId,
    '--duration_s',
    '2.5',
    '--json',
  ];
  try {
    const { stdout } = await run(process.execPath, args);
    return { code: 0, report: JSON.parse(stdout) as ContractReport };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, report: JSON.parse(e.stdout) as ContractReport };
  }
}

test('the verifier passes a healthy device and fails a 1 Hz one and a half-invalid one, saying why', async () => {
  const [good, oneHz, half] = await Promise.all([verify(healthy.id), verify(slow.id), verify('faulty')]);

  assert.equal(good.code, 0, JSON.stringify(good.report));
  assert.equal(good.report.passed, true);
  for (const t of good.report.topics) {
    assert.equal(t.valid_ratio, 1);
    assert.ok(t.rate_hz >= 3 && t.rate_hz <= 15);
  }

  assert.equal(oneHz.code, 1);
  assert.equal(oneHz.report.passed, false);
  for (const t of oneHz.report.topics) assert.match(t.failures.join(), /rate .* Hz outside 3-15 Hz/);

  assert.equal(half.code, 1);
  for (const t of half.report.topics) {
    assert.ok(t.valid_ratio >= 0.4 && t.valid_ratio <= 0.6, `about half valid: ${t.valid_ratio}`);
    assert.match(t.failures.join(), /of samples valid \(at least 80% required\)/);
    assert.ok(t.invalid_reasons.length > 0);
  }
  assert.ok(half.report.topics.find((t) => t.topic.endsWith('/telemetry'))!.invalid_reasons.some((r) => /not JSON/.test(r.reason)));
  assert.ok(half.report.topics.find((t) => t.topic.endsWith('/dets'))!.invalid_reasons.some((r) => /person_count|dets/.test(r.reason)));
});

test("the readable report names the device, the verdict and the reasons (the spec's --mqtt-host spellings still work)", async () => {
  const { stdout } = await run(process.execPath, [
    join(packageRoot(), 'bin', 'lookout.js'),
    'verify-contract',
    '--mqtt-host',
    '127.0.0.1',
    '--mqtt-port',
    String(broker.port),
    '--device-id',
    'nobody',
    '--duration-s',
    '0.5',
  ]).catch((e: { stdout: string }) => e);
  assert.match(stdout, /contract verification of nobody .*: FAIL/);
  assert.match(stdout, /no messages received/);
});

test('broker credentials come from the environment, never from a flag that the process list shows', async () => {
  const guarded = await EmbeddedBroker.start({ port: 0, auth: { username: 'ops', password: 'pw-verify-secret' } });
  try {
    const base = [
      join(packageRoot(), 'bin', 'lookout.js'),
      'verify-contract',
      '--mqtt-host',
      '127.0.0.1',
      '--mqtt-port',
      String(guarded.port),
      '--device-id',
      'nobody',
      '--duration-s',
      '0.3',
    ];
    const env = { ...process.env, LOOKOUT_MQTT_USERNAME: 'ops', LOOKOUT_MQTT_PASSWORD: 'pw-verify-secret' };
    const connected = await run(process.execPath, base, { env }).catch((e: { code: number; stdout: string; stderr: string }) => e);
    assert.match(connected.stdout, /contract verification of nobody .*: FAIL/, connected.stderr);

    const flagged = await run(process.execPath, [...base, '--username', 'ops', '--password', 'pw-verify-secret']).catch(
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    assert.equal((flagged as { code?: number }).code, 2);
    assert.match(flagged.stderr, /LOOKOUT_MQTT_PASSWORD/);
  } finally {
    await guarded.close();
  }
});
