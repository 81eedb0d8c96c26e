/**
 * events/incident from a real device triggers the hub's pull-and-understand (spec 01: an incident
 * "triggers a proxy video-understanding pull"): a `lookout-edge` process signed in to the hub's broker
 * with its own credentials records chunks, and one of its plugins publishes an incident on its own
 * bus connection; the hub finds the chunk covering it, pulls its clip, and keeps the device's
 * video_understand answer with the incident. The other incident tests publish as a test client.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, callTool, testHub, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-incident';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'incident-camera.json');

describe('an incident a device publishes', () => {
  let dir: string;
  let hub: RunningHub;
  let device: DeviceProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lookout-device-incident-'));
    // The broker asks every client for its credentials: the incident comes from the device's own session.
    hub = await testHub({ anonymousBroker: false, toolTimeoutMs: 5000, env: { LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '5000', LOOKOUT_MEDIA_INCIDENT_WAIT_MS: '0' } });
    const creds = hub.deviceCredentials(DEVICE);
    device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image: IMAGE,
      layer: 'layer0',
      dataDir: join(dir, 'device'),
      env: {
        ...{ ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', CHUNK_SECONDS: '2' },
        LOOKOUT_MQTT_USERNAME: creds.username,
        LOOKOUT_MQTT_PASSWORD: creds.password,
      },
      readyTimeoutMs: 30_000,
    });
    await waitFor(
      'two chunks in the hub cache (data_manifest)',
      async () => ((await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices?.[DEVICE]?.recent_chunks?.length ?? 0) >= 2,
      40_000,
      250,
    );
  });

  after(async () => {
    await device?.stop();
    await hub?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is pulled and understood by the hub, and kept with the incident', async () => {
    const [newest] = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].recent_chunks as { name: string; started_at: string }[];
    const at = new Date(Date.parse(newest.started_at) + 500).toISOString();
    // The device's plugin publishes it (asked through the hub's tool proxy, as an operator's button would be pressed).
    const raised = await callTool(hub.url, DEVICE, 'raise_incident', { message: 'door forced', at });
    assert.equal(raised.body.status, 'ok', raised.text);
    const alert = await waitFor(
      'the incident understood',
      async () => {
        const alerts = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].anomaly_alerts as {
          message?: string;
          video_understanding?: { status: string };
        }[];
        return alerts.find((x) => x.message === 'door forced' && x.video_understanding && x.video_understanding.status !== 'pending');
      },
      30_000,
      250,
    );
    const u = alert.video_understanding as unknown as { status: string; chunk: string; pulled: boolean; result: { chunks: string[] } };
    assert.equal(u.status, 'ok', JSON.stringify(u));
    assert.equal(u.chunk, newest.name);
    assert.equal(u.pulled, true, JSON.stringify(u));
    assert.ok(u.result.chunks.includes(newest.name), JSON.stringify(u.result));
    const events = (await api(hub.url, `/debug/events?device=${DEVICE}&kind=video_understand&limit=20`)).body.events as { message: string }[];
    assert.ok(
      events.some((e) => e.message.startsWith(`incident at ${at}`)),
      JSON.stringify(events),
    );
  });
});
