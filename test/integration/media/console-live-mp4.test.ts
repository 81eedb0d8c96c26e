/**
 * GET /stream/live/mp4 against a real lookout-edge device (simulated camera, RTSP behind Digest):
 * two viewers read one RTSP session and get fragmented MP4 that ffprobe reads (H.264, the stream's
 * size, about its frame rate); the session ends once the last viewer leaves; a wrong camera password
 * is a 502 naming the setting, never the password; a device that announces no RTSP port is a 503.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { consolePluginSet } from '../../browser/console-fleet.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { api, callTool, testHub, waitFor } from '../../support/hub-helpers.js';

const run = promisify(execFile);
const PASSWORD = 'live-mp4-camera-pw';

/** Reads the stream for `ms`, then lets it go. */
async function readFor(url: string, ms: number): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const controller = new AbortController();
  const res = await fetch(url, { signal: controller.signal });
  const parts: Buffer[] = [];
  const until = Date.now() + ms;
  if (res.body) {
    const reader = res.body.getReader();
    while (Date.now() < until) {
      const { value, done } = await reader.read();
      if (done) break;
      parts.push(Buffer.from(value));
    }
  }
  controller.abort();
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.concat(parts) };
}

describe('live-mp4: a device’s H.264 preview as fragmented MP4', () => {
  let dir: string;
  let hub: RunningHub;
  let wrong: RunningHub;
  let device: DeviceProcess;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'live-mp4-'));
    const set = await consolePluginSet();
    const registryFile = join(dir, 'registry.json');
    await writeFile(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-silent', ips: ['127.0.0.1'] }] }));
    const env = { READINESS_START_DELAY_MS: '600000', LOOKOUT_LIVE_IDLE_MS: '200' };
    hub = await testHub({ ...set, registryFile, env: { ...env, LOOKOUT_LIVE_RTSP_PASSWORD: PASSWORD } });
    wrong = await testHub({ ...set, env: { ...env, LOOKOUT_LIVE_RTSP_PASSWORD: 'not-the-camera-password' } });
    device = await startDeviceProcess({
      deviceId: 'cam-live',
      mqtt: hub.brokerUrl,
      layer: 'layer0',
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', ONVIF_PASSWORD: PASSWORD },
    });
    await waitFor('the device’s hello with its RTSP port', async () => {
      const r = await api(hub.url, '/fleet/registry?device=cam-live');
      return r.body.shadows?.[0]?.ports?.rtsp !== undefined;
    });
  });

  after(async () => {
    await device?.stop();
    await hub?.close();
    await wrong?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves two viewers from one RTSP session, each a fragmented MP4 of the stream', async () => {
    const url = `${hub.url}/stream/live/mp4?target=cam-live`;
    // The device adds its H.264 output on the first request (its encoder restarts once): not what is measured here.
    await readFor(url, 1000);
    await waitFor('the device’s H.264 output, and the warm-up session gone', async () => {
      const live = (await callTool(hub.url, 'cam-live', 'get_live_status')).body.result;
      return live.h264_available === true && live.viewers === 0;
    });
    const viewers = readFor(url, 3000);
    const second = readFor(url, 3000);
    await new Promise((r) => setTimeout(r, 1500));
    const status = await callTool(hub.url, 'cam-live', 'get_live_status');
    assert.equal(status.body.result.viewers, 1, 'one RTSP session for both viewers');
    for (const [i, v] of (await Promise.all([viewers, second])).entries()) {
      assert.equal(v.status, 200, `viewer ${i}: ${v.bytes.toString('utf8', 0, 200)}`);
      assert.match(v.type ?? '', /^video\/mp4; codecs="avc1\.[0-9a-f]{6}"$/);
      const file = join(dir, `viewer-${i}.mp4`);
      await writeFile(file, v.bytes);
      const { stdout } = await run('ffprobe', [
        '-v',
        'error',
        '-count_frames',
        '-show_entries',
        'stream=codec_name,width,height,nb_read_frames',
        '-of',
        'json',
        file,
      ]);
      const s = JSON.parse(stdout).streams[0];
      assert.deepEqual([s.codec_name, s.width, s.height], ['h264', 320, 240]);
      // 3 s at 5 fps, and the GOP a viewer starts with: ten pictures at least.
      assert.ok(Number(s.nb_read_frames) >= 10, `viewer ${i}: ${v.bytes.length} bytes, ${stdout}`);
    }
  });

  it('ends the RTSP session once the last viewer has left', async () => {
    await readFor(`${hub.url}/stream/live/mp4?target=cam-live`, 500);
    await waitFor('no RTSP viewer on the device', async () => (await callTool(hub.url, 'cam-live', 'get_live_status')).body.result.viewers === 0, 10_000, 100);
  });

  it('answers a refused camera password with 502 naming the setting, never the password', async () => {
    const other = await startDeviceProcess({
      deviceId: 'cam-other',
      mqtt: wrong.brokerUrl,
      layer: 'layer0',
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ONVIF_PASSWORD: PASSWORD },
    });
    try {
      await waitFor('its hello', async () => (await api(wrong.url, '/fleet/registry?device=cam-other')).body.shadows?.[0]?.ports?.rtsp !== undefined);
      const r = await api(wrong.url, '/stream/live/mp4?target=cam-other');
      assert.equal(r.status, 502, r.text);
      assert.equal(r.body.error.code, 'device_auth_refused');
      assert.match(r.body.error.message, /LOOKOUT_LIVE_RTSP_PASSWORD/);
      assert.ok(!r.text.includes('not-the-camera-password') && !r.text.includes(PASSWORD));
    } finally {
      await other.stop();
    }
  });

  it('answers 503 for a device that announces no RTSP port', async () => {
    const r = await api(hub.url, '/stream/live/mp4?target=cam-silent');
    assert.equal(r.status, 503);
    assert.equal(r.body.error.code, 'live_stream_unavailable');
  });
});
