/**
 * get_live_status end to end: a real hub and a real `lookout-edge` device of the rtsp-camera image.
 * One RTSP viewer (a bare client playing /preview over TCP) makes the device's get_live_status and
 * the hub's GET /stream/live/status say viewers 1, with the newest keyframe and the size and rate
 * the encoder runs at; /stream/live/info carries the same report; the viewer gone, viewers is 0.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import camera from '../../../hub/plugins/camera-surface/src/index.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { RawRtspViewer } from '../../unit/plugins/rtsp/raw-rtsp-client.js';
import { api, testHub, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-live-status';
const IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json');

describe('get_live_status through the hub', () => {
  let hub: RunningHub;
  let device: DeviceProcess;
  let dir: string;
  let rtspPort: number;
  let viewer: RawRtspViewer | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hub-live-status-'));
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
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0', LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET },
      readyTimeoutMs: 30_000,
    });
    rtspPort = device.ready.ports.rtsp;
    assert.ok(typeof rtspPort === 'number' && rtspPort > 0, JSON.stringify(device.ready.ports));
    await waitFor(
      'the device registered with its rtsp and live ports',
      async () => {
        const r = await api(hub.url, `/fleet/registry?device=${DEVICE}`);
        const ports = r.body.shadows?.[0]?.ports;
        return ports?.live && ports?.rtsp ? true : undefined;
      },
      20_000,
      200,
    );
  });

  after(async () => {
    viewer?.close();
    await device?.stop();
    await hub?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const status = async () => {
    const r = await api(hub.url, `/stream/live/status`);
    assert.equal(r.status, 200, r.text);
    return r.body.devices[DEVICE];
  };

  it('no viewer yet: viewers 0, the encoder’s size and rate from the device, a keyframe time', async () => {
    const s = await waitFor(
      'a keyframe reported',
      async () => {
        const v = await status();
        return v?.last_keyframe_at ? v : undefined;
      },
      20_000,
      250,
    );
    assert.equal(s.stats_reason, null, s.stats_reason);
    assert.equal(s.stats_error_code, null);
    assert.equal(s.viewers, 0);
    assert.deepEqual(s.sessions, { tcp: 0, udp: 0 });
    assert.equal(s.resolution, '320x240');
    assert.equal(s.resolution_source, 'device');
    assert.equal(s.fps, 5);
    assert.equal(s.fps_source, 'device');
    assert.equal(s.codec, 'H265');
    assert.equal(s.stream_up, true, s.reason);
    assert.equal(s.encoder.running, true);
    assert.equal(s.rtsp.port, rtspPort);
  });

  it('one RTSP viewer: viewers 1 on the device tool and in /stream/live/status, with a recent keyframe', async () => {
    viewer = await RawRtspViewer.open(rtspPort);
    await viewer.play(`rtsp://127.0.0.1:${rtspPort}/preview`);
    // A few seconds of watching, pictures arriving.
    await new Promise((r) => setTimeout(r, 3000));
    assert.ok(viewer.rtpBytes > 0, 'RTP reached the viewer');

    const tool = await api(hub.url, `/tools/call?target=${DEVICE}`, { method: 'POST', json: { tool: 'get_live_status', arguments: {} } });
    assert.equal(tool.status, 200, tool.text);
    assert.equal(tool.body.status, 'ok', tool.text);
    const result = tool.body.result;
    assert.equal(result.viewers, 1, tool.text);
    assert.deepEqual(result.sessions, { tcp: 1, udp: 0 });

    const s = await status();
    assert.equal(s.viewers, 1, JSON.stringify(s));
    assert.deepEqual(s.sessions, { tcp: 1, udp: 0 });
    assert.ok(s.last_keyframe_at, 'a keyframe time');
    // GOP 5 at 5 fps: a keyframe every second (the loaded test machine gets slack).
    assert.ok(Date.now() - Date.parse(s.last_keyframe_at) < 15_000, s.last_keyframe_at);
    assert.ok(s.encoder.frames > 0);

    const info = await api(hub.url, `/stream/live/info?target=${DEVICE}`);
    assert.equal(info.status, 200, info.text);
    assert.equal(info.body.live_status.viewers, 1);
    assert.equal(info.body.live_status_error, null);
    assert.deepEqual(info.body.live_status.rtsp.paths, { h265: '/preview', h264: '/preview_h264' });
  });

  it('the viewer gone: viewers 0', async () => {
    viewer?.close();
    viewer = undefined;
    await waitFor('viewers 0', async () => ((await status()).viewers === 0 ? true : undefined), 10_000, 200);
  });
});
