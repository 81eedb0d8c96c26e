/**
 * Degrade, never die, with real parts: a `lookout-edge` process whose detector model is corrupt and
 * whose third-party plugin fails at start connects anyway, reports each failure with its code (the
 * hub's /fleet/health shows them), skips what needs them, and brings a plugin back when it is
 * restarted through its cmd topic or through the hub's tool forwarding.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, callTool, endClient, mqttClient, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const ID = 'cam-degraded';

interface Problem {
  name: string;
  code: string | null;
  message: string | null;
}
interface FleetHealth {
  devices: Record<string, { presence: string; plugins: { failed: Problem[]; skipped: Problem[] } }>;
}

describe('a device with failing plugins', () => {
  let hub: RunningHub;
  let device: DeviceProcess;
  let dataDir: string;
  let client: MqttClient;

  before(async () => {
    hub = await testHub();
    dataDir = await mkdtemp(join(tmpdir(), 'lookout-degraded-'));
    await mkdir(join(dataDir, 'data', 'models'), { recursive: true });
    await writeFile(join(dataDir, 'data', 'models', 'broken.onnx'), 'not a model at all');
    device = await startDeviceProcess({
      deviceId: ID,
      mqtt: hub.brokerUrl,
      dataDir,
      image: join(packageRoot(), 'test', 'fixtures', 'images', 'flaky-camera.json'),
      layer: 'layer2',
      env: { RF_DETR_MODEL_PATH: '/data/models/broken.onnx', HEALTH_INTERVAL_MS: '500' },
    });
    client = await mqttClient(hub.brokerUrl, { clientId: 'degrade-test' });
  });

  after(async () => {
    await endClient(client);
    await device.stop();
    await hub.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const fleetHealth = async () => (await api<FleetHealth>(hub.url, '/fleet/health')).body.devices[ID];

  it('connects, and the hub shows each failed plugin with its code and the plugins skipped because of them', async () => {
    const seen = await waitFor('the failed plugins in /fleet/health', async () => {
      const d = await fleetHealth();
      return d && d.presence === 'online' && d.plugins.failed.length === 2 ? d : undefined;
    });
    const failed = Object.fromEntries(seen.plugins.failed.map((p) => [p.name, p]));
    assert.equal(failed.detector?.code, 'model_package_invalid');
    assert.match(failed.detector.message!, /broken\.onnx/);
    assert.equal(failed.flaky?.code, 'flaky.not_ready');
    assert.deepEqual(seen.plugins.skipped.map((p) => [p.name, p.code, p.message]).sort(), [
      ['flaky-dependent', 'dependency_failed', 'dependency_failed: flaky'],
      ['tracker', 'dependency_failed', 'dependency_failed: detector'],
    ]);
  });

  it('answers get_rfdetr_status through the hub with the model error', async () => {
    const answer = await callTool(hub.url, ID, 'get_rfdetr_status');
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.status, 'ok');
    assert.equal(answer.body.result.model_error.code, 'model_package_invalid');
  });

  it('restarts a failed plugin through the cmd topic, and its dependents come back with it', async () => {
    await writeFile(join(dataDir, 'flaky-ready'), 'yes');
    const responses = new Promise<Record<string, unknown>>((resolve) => {
      client.on('message', (topic, payload) => {
        const body = JSON.parse(payload.toString()) as Record<string, unknown>;
        if (topic === `devices/${ID}/responses` && body.request_id === 'restart-1') resolve(body);
      });
    });
    await new Promise<void>((resolve, reject) => client.subscribe(`devices/${ID}/responses`, { qos: 1 }, (err) => (err ? reject(err) : resolve())));
    await publish(client, `devices/${ID}/cmd/tool`, { tool: 'restart_plugin', arguments: { name: 'flaky' }, request_id: 'restart-1' });
    const reply = (await responses) as { ok: boolean; result: { name: string; state: string } };
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.deepEqual([reply.result.name, reply.result.state], ['flaky', 'ok']);
    const hello = await callTool(hub.url, ID, 'dependent_hello');
    assert.equal(hello.body.result.greeting, 'hello from flaky');
    // The status the device republished at once tells the hub: only the detector is still down.
    await waitFor('flaky to leave the failed list', async () => {
      const d = await fleetHealth();
      return d?.plugins.failed.length === 1 && d.plugins.skipped.length === 1 ? d : undefined;
    });
  });

  it('restarts through the hub; a plugin that fails again is refused during its backoff', async () => {
    const first = await callTool(hub.url, ID, 'restart_plugin', { name: 'detector' });
    assert.equal(first.body.status, 'ok', first.text);
    assert.deepEqual([first.body.result.state, first.body.result.code], ['failed', 'model_package_invalid']);
    const again = await callTool(hub.url, ID, 'restart_plugin', { name: 'detector' });
    assert.equal(again.body.status, 'error', again.text);
    assert.match(JSON.stringify(again.body), /failed again recently; retry in \d+ s/);
    const running = await callTool(hub.url, ID, 'restart_plugin', { name: 'camera' });
    assert.match(JSON.stringify(running.body), /only a failed or skipped plugin is restarted/);
  });
});
