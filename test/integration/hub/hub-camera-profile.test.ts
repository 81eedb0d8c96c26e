/**
 * The hub's camera plugin against a real `lookout-edge` device (encode-camera image: the camera
 * profile tools and the real encoder's live stream): GET and PUT /camera/profile round trip through
 * the device's profile file, refused bodies, unknown targets, GET /stream/live/status and
 * /stream/live/info, and a device that is down.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import camera from '../../../hub/plugins/camera-surface/src/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { freePort } from '../../support/free-port.js';
import { api, endClient, mqttClient, msg, publish, testHub, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-profile';
const PORTS_ONLY = 'cam-ports';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'encode-camera.json');

describe('hub camera plugin against a real device', () => {
  let hub: RunningHub;
  let device: DeviceProcess;
  let client: MqttClient;
  let dir: string;
  let deadPort: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hub-camera-'));
    deadPort = await freePort();
    const set = await loadHubPluginSet();
    hub = await testHub({
      dataDir: dir,
      toolTimeoutMs: 3000,
      plugins: [...set.plugins.filter((p) => p.name !== 'camera-surface' && p.name !== 'device-ssh'), camera],
      essential: set.essential,
      env: { LOOKOUT_HUB_CAMERA_PROBE_TIMEOUT_MS: '4000', LOOKOUT_HUB_CAMERA_TOOL_TIMEOUT_MS: '4000' },
    });
    device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image: IMAGE,
      layer: 'layer0',
      role: 'front_door',
      // The encoder runs small whatever the profile says; the live stream wants the hub's derived token.
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0', LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET },
      readyTimeoutMs: 30_000,
    });
    await waitFor(
      'the device registered with its live port',
      async () => {
        const r = await api(hub.url, `/fleet/registry?device=${DEVICE}`);
        return r.body.shadows?.[0]?.ports?.live ? true : undefined;
      },
      20_000,
      200,
    );
    // A device that announced RTSP and ONVIF ports but whose tool server is gone.
    client = await mqttClient(hub.brokerUrl);
    const hello = msg.hello(PORTS_ONLY, ['127.0.0.1'], deadPort);
    await publish(client, `devices/${PORTS_ONLY}/hello`, { ...hello, ports: { tools: deadPort, rtsp: 8554, onvif: 8080 } });
    await waitFor('the ports-only hello', async () => (await api(hub.url, `/fleet/registry?device=${PORTS_ONLY}`)).body.shadows?.[0]);
  });

  after(async () => {
    if (client) await endClient(client);
    await device?.stop();
    await hub?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('GET /camera/profile answers the device’s profile', async () => {
    const r = await api(hub.url, `/camera/profile?target=${DEVICE}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.device_id, DEVICE);
    assert.deepEqual(Object.keys(r.body.profile).sort(), ['bitrate_kbps', 'codec', 'fps', 'gop', 'rate_control', 'resolution']);
    assert.equal(typeof r.body.path, 'string');
  });

  it('PUT /camera/profile persists: the file and the next GET show it', async () => {
    const put = await api(hub.url, `/camera/profile?target=${DEVICE}`, { method: 'PUT', json: { bitrate_kbps: 1500, rate_control: 'CBR' } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.profile.bitrate_kbps, 1500);
    assert.deepEqual([...put.body.changed].sort(), ['bitrate_kbps', 'rate_control']);
    const get = await api(hub.url, `/camera/profile?target=${DEVICE}`);
    assert.equal(get.body.profile.bitrate_kbps, 1500);
    assert.equal(get.body.profile.rate_control, 'CBR');
    assert.equal(get.body.updated_at, put.body.updated_at);
    const file = JSON.parse(readFileSync(get.body.path as string, 'utf8'));
    assert.equal(file.profile.bitrate_kbps, 1500);
  });

  it('refuses a bad body with 400 naming the field, before the device is asked', async () => {
    const cases: [unknown, string][] = [
      [{ fps: 0 }, 'body.fps'],
      [{ fps: 'fast' }, 'body.fps'],
      [{ codec: 'MJPEG' }, 'body.codec'],
      [{ resolution: '10x10' }, 'body.resolution'],
      [{ colour: 'red' }, 'body.colour'],
      [{}, 'body'],
    ];
    for (const [json, field] of cases) {
      const r = await api(hub.url, `/camera/profile?target=${DEVICE}`, { method: 'PUT', json });
      assert.equal(r.status, 400, `${JSON.stringify(json)}: ${r.text}`);
      assert.equal(r.body.error.code, 'bad_request');
      assert.equal(r.body.error.details.field, field, r.text);
    }
    const noTarget = await api(hub.url, '/camera/profile', { method: 'PUT', json: { fps: 5 } });
    assert.equal(noTarget.status, 400);
    assert.equal(noTarget.body.error.details.field, 'query.target');
    // Nothing of it reached the device.
    assert.equal((await api(hub.url, `/camera/profile?target=${DEVICE}`)).body.profile.bitrate_kbps, 1500);
  });

  it('answers 404 target_unknown for a device it does not know, on every route with a target', async () => {
    for (const [method, path] of [
      ['GET', '/camera/profile'],
      ['PUT', '/camera/profile'],
      ['GET', '/stream/live/info'],
    ]) {
      const r = await api(hub.url, `${path}?target=cam-nobody`, method === 'PUT' ? { method, json: { fps: 5 } } : {});
      assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
      assert.equal(r.body.error.code, 'target_unknown');
    }
  });

  it('GET /stream/live/status: the live stream up at the size the encoder runs, the profile beside it', async () => {
    const r = await api(hub.url, '/stream/live/status');
    assert.equal(r.status, 200, r.text);
    const s = r.body.devices[DEVICE];
    assert.ok(s, r.text);
    assert.equal(s.stream_up, true, s.reason);
    assert.equal(s.codec, 'H265');
    assert.equal(s.resolution, '320x240');
    assert.equal(s.resolution_source, 'stream');
    assert.equal(s.fps, s.profile.fps);
    assert.equal(s.profile_error, null);
    // The encode-camera image has no rtsp plugin: no get_live_status, the size from the stream, fps from the profile.
    assert.equal(s.fps_source, 'profile');
    assert.equal(s.viewers, null);
    assert.equal(s.last_keyframe_at, null);
    assert.match(s.stats_reason, /no get_live_status tool/);
    assert.equal(s.stats_error_code, 'tool_not_found');
    const gone = r.body.devices[PORTS_ONLY];
    assert.equal(gone.stream_up, null);
    assert.match(gone.reason, /no live port/);
    assert.equal(gone.profile, null);
    assert.equal(gone.profile_error.code, 'device_unreachable');
    assert.equal(gone.rtsp.port, 8554);
    assert.equal(r.body.up_count, 1);
    const one = await api(hub.url, '/stream/live/status?limit=1');
    assert.equal(one.body.device_count, 1);
    assert.equal(one.body.left_out, 1);
    assert.equal((await api(hub.url, '/stream/live/status?limit=0')).status, 400);
  });

  it('GET /stream/live/info: RTSP, ONVIF and live addresses from the hello, the profile from the device', async () => {
    const real = await api(hub.url, `/stream/live/info?target=${DEVICE}`);
    assert.equal(real.status, 200, real.text);
    assert.equal(real.body.host, '127.0.0.1');
    assert.match(real.body.live_uri, /^http:\/\/127\.0\.0\.1:\d+\/live\.h265$/);
    assert.equal(real.body.profile.profile.bitrate_kbps, 1500);
    assert.equal(real.body.live_status, null);
    assert.equal(real.body.live_status_error.code, 'tool_not_found');
    const ports = await api(hub.url, `/stream/live/info?target=${PORTS_ONLY}`);
    assert.equal(ports.status, 200, ports.text);
    assert.deepEqual(ports.body.streams, [
      { name: 'h265', codec: 'H265', uri: 'rtsp://127.0.0.1:8554/preview' },
      { name: 'h264', codec: 'H264', uri: 'rtsp://127.0.0.1:8554/preview_h264' },
    ]);
    assert.deepEqual(ports.body.onvif, { port: 8080, device_service: 'http://127.0.0.1:8080/onvif/device_service' });
    assert.equal(ports.body.profile, null);
    assert.equal(ports.body.profile_error.code, 'device_unreachable');
  });

  it('a device that is down: 502 device_unreachable for its profile, its stream down with the reason', async () => {
    const r = await api(hub.url, `/camera/profile?target=${PORTS_ONLY}`);
    assert.equal(r.status, 502, r.text);
    assert.equal(r.body.error.code, 'device_unreachable');
    await device.stop();
    const put = await api(hub.url, `/camera/profile?target=${DEVICE}`, { method: 'PUT', json: { fps: 10 } });
    assert.equal(put.status, 502, put.text);
    assert.equal(put.body.error.code, 'device_unreachable');
    const status = await api(hub.url, '/stream/live/status');
    const s = status.body.devices[DEVICE];
    assert.equal(s.stream_up, false);
    assert.match(s.reason, /cannot be reached/);
    assert.equal(s.profile_error.code, 'device_unreachable');
  });
});
