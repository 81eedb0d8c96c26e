/**
 * Routine playback needs no root password (issue 26, item 10). A live simulated device (camera,
 * H.265 encoder, recorder; its tool server asks for the token the hub derives from the fleet
 * secret) and a hub with neither DEVICE_PASSWORD nor an SSH key: pull-recording and the clip route
 * answer a playable mp4 (ffprobe), the chunk coming from the device's own `GET /recordings/<file>`.
 * The device is reached through a TCP relay that cuts the first chunk transfer after a few KB: the
 * hub resumes with a Range and plays the whole chunk. A hub with the wrong fleet secret is refused
 * by the device and says so in its debug ring.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DeviceHandle } from '../../../edge/src/device-runtime.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { CuttingRelay } from '../../support/cutting-relay.js';
import { NO_SSH, startRecordingDevice, toolPortOf } from '../../support/recording-device.js';
import { api, callTool, testHub, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-http-play';

/** ffprobe of an mp4 (from a file: from a pipe it stops at the moov atom of a faststart mp4). */
function probe(dir: string, mp4: Buffer): { codec: string; duration: number } {
  const file = join(dir, `probe-${Date.now()}-${Math.random()}.mp4`);
  writeFileSync(file, mp4);
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name:format=duration', '-of', 'json', file]).toString();
  const j = JSON.parse(out) as { streams: { codec_name: string }[]; format: { duration: string } };
  return { codec: j.streams[0].codec_name, duration: Number(j.format.duration) };
}

describe('playback from the device itself, without SSH credentials', () => {
  let dir: string;
  let device: DeviceHandle;
  let relay: CuttingRelay;
  let hub: RunningHub;
  let strangerHub: RunningHub;
  let chunks: string[];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'media-http-'));
    device = await startRecordingDevice(DEVICE, dir);
    relay = await CuttingRelay.start(toolPortOf(device), 3000, 1);
    const registryFile = join(dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify({ devices: [{ device_id: DEVICE, ips: ['127.0.0.1'], tool_port: relay.port, labels: ['porch'] }] }));
    const env = { ...NO_SSH, LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '5000', LOOKOUT_MEDIA_INCIDENT_WAIT_MS: '0' };
    hub = await testHub({ dataDir: join(dir, 'hub'), registryFile, toolTimeoutMs: 5000, env });
    strangerHub = await testHub({ dataDir: join(dir, 'stranger'), registryFile, toolTimeoutMs: 5000, fleetSecret: 'another-fleet-secret-0123456789', env });
    chunks = await waitFor(
      'two complete chunks on the device',
      async () => {
        const r = await callTool(hub.url, DEVICE, 'list_recording_chunks', { limit: 10 });
        const list = (r.body?.result?.chunks ?? []) as { name: string }[];
        return list.length >= 2 ? list.map((c) => c.name) : undefined;
      },
      40_000,
      250,
    );
  });

  after(async () => {
    await hub?.close();
    await strangerHub?.close();
    await relay?.close();
    await device?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('pull-recording answers a playable mp4 of the latest chunk, fetched from the device and resumed after a cut', async () => {
    const res = await fetch(`${hub.url}/pull-recording?target=${DEVICE}&which=latest`);
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200, body.toString().slice(0, 500));
    assert.equal(res.headers.get('x-lookout-chunk-source'), 'device');
    const played = probe(dir, body);
    assert.equal(played.codec, 'h264');
    assert.ok(Math.abs(played.duration - 2) < 0.5, `duration ${played.duration}`);
    // The first transfer was cut; the hub asked for the rest with a Range and the file's ETag.
    assert.equal(relay.cutsMade, 1);
    const resumed = relay.heads.find((h) => /^range: bytes=\d+-\r?$/im.test(h));
    assert.ok(resumed, relay.heads.join('\n---\n'));
    assert.match(resumed, /^if-range: "/im);
    assert.match(resumed, /^authorization: Bearer /im);
    const ring = await api(hub.url, '/debug/events?kind=recording_fail&limit=200');
    const fetchFailures = (ring.body.events as { details?: { step?: string } }[]).filter((e) => e.details?.step?.startsWith('fetch_'));
    assert.deepEqual(fetchFailures, [], 'no source failed: the cut transfer was resumed, not given up');
  });

  it('the clip route answers 200 with a playable mp4 of another chunk (H.264 and the HEVC remux)', async () => {
    const name = chunks[chunks.length - 1];
    for (const [suffix, codec] of [
      ['.mp4', 'h264'],
      ['.hevc.mp4', 'hevc'],
    ] as const) {
      const res = await fetch(`${hub.url}/media/clips/${DEVICE}/${name.replace('.h265', suffix)}`);
      const body = Buffer.from(await res.arrayBuffer());
      assert.equal(res.status, 200, body.toString().slice(0, 500));
      assert.equal(res.headers.get('content-type'), 'video/mp4');
      assert.equal(probe(dir, body).codec, codec);
    }
  });

  it('a hub whose token the device refuses cannot fetch, and its ring says why', async () => {
    const res = await fetch(`${strangerHub.url}/media/clips/${DEVICE}/${chunks[0].replace('.h265', '.mp4')}`);
    assert.equal(res.status, 502, await res.text());
    const ring = await api(strangerHub.url, '/debug/events?kind=recording_fail&limit=200');
    const events = ring.body.events as { message: string; details?: { step?: string; code?: string } }[];
    assert.ok(
      events.some((e) => e.details?.step === 'fetch_device' && e.details.code === 'device_auth_refused'),
      JSON.stringify(events),
    );
    assert.ok(
      events.some((e) => e.details?.step === 'fetch_sftp' && e.details.code === 'ssh_not_configured'),
      JSON.stringify(events),
    );
  });
});
