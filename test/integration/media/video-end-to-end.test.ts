/**
 * The whole video path with nothing standing in: a real `lookout-edge` (camera, encode, recorder)
 * records 2 s chunks; its data_manifest reaches the hub; playback-ready lists them with play URLs
 * whose mp4 (H.264 transcode and hvc1 remux) ffprobe reads with the sidecar's duration; byte ranges
 * work. Then the device stops: tools/call list_recording_chunks is answered from an SSH discovery
 * (a real OpenSSH sshd), and pull-recording fetches the newest chunk over SFTP.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { api, callTool, endClient, mqttClient, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const RECORDING_IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'recording-camera.json');
const DEVICE = 'cam-video-e2e';
const LABEL = 'loading_dock';

interface Probe {
  codec: string;
  tag: string;
  duration: number;
}

let probes = 0;
/** ffprobe reads a file: from a pipe it stops at the moov atom of a faststart mp4 and the write fails. */
function probe(mp4: Buffer): Probe {
  const file = join(tmpdir(), `video-e2e-${process.pid}-${probes++}.mp4`);
  writeFileSync(file, mp4);
  let out: string;
  try {
    out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,codec_tag_string:format=duration', '-of', 'json', file]).toString();
  } finally {
    rmSync(file, { force: true });
  }
  const j = JSON.parse(out) as { streams: { codec_name: string; codec_tag_string: string }[]; format: { duration: string } };
  return { codec: j.streams[0].codec_name, tag: j.streams[0].codec_tag_string, duration: Number(j.format.duration) };
}

async function bytes(url: string, init: RequestInit = {}): Promise<{ status: number; body: Buffer; headers: Headers }> {
  const res = await fetch(url, init);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}

describe('video end to end: a recording device, the hub, SSH', () => {
  let hub: RunningHub;
  let sshd: Sshd;
  let device: DeviceProcess;
  let dir: string;
  let recordings: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'video-e2e-'));
    recordings = join(dir, 'recordings');
    mkdirSync(recordings);
    sshd = await startSshd();
    const knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    const registryFile = join(dir, 'registry.json');
    // The tool port comes from the device's hello; SSH reaches the test's sshd, confined to the recordings folder.
    writeFileSync(
      registryFile,
      JSON.stringify({ devices: [{ device_id: DEVICE, labels: [LABEL], ssh_port: sshd.port, ssh_user: sshd.user, recordings_root: recordings }] }),
    );
    hub = await testHub({
      dataDir: join(dir, 'hub'),
      registryFile,
      toolTimeoutMs: 3000,
      env: {
        LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
        LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
        LOOKOUT_MEDIA_STEP_TIMEOUT_MS: '5000',
        LOOKOUT_MEDIA_INCIDENT_WAIT_MS: '0',
      },
    });
    device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image: RECORDING_IMAGE,
      layer: 'layer0',
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', CHUNK_SECONDS: '2', RECORDINGS_DIR: recordings },
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
    await sshd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lists the recorded chunks as playable: the mp4s play with the sidecar’s duration, ranges work', async () => {
    const ready = await api(hub.url, `/fleet/playback-ready?shadow=${LABEL}&limit=5`);
    assert.equal(ready.status, 200, ready.text);
    assert.ok(ready.body.count >= 2, ready.text);
    const chunk = ready.body.recent_chunks[0] as {
      name: string;
      duration_s: number;
      keyframe_count: number;
      justified: boolean;
      playUrl: string;
      playUrlHevc: string;
    };
    assert.equal(typeof chunk.justified, 'boolean');
    assert.ok(chunk.keyframe_count >= 1);

    const h264 = await bytes(`${hub.url}${chunk.playUrl}`);
    assert.equal(h264.status, 200, h264.body.toString().slice(0, 300));
    assert.equal(h264.headers.get('content-type'), 'video/mp4');
    const played = probe(h264.body);
    assert.equal(played.codec, 'h264');
    assert.ok(Math.abs(played.duration - chunk.duration_s) <= 0.25, `mp4 ${played.duration} s, sidecar ${chunk.duration_s} s`);

    const hevc = await bytes(`${hub.url}${chunk.playUrlHevc}`);
    assert.equal(hevc.status, 200);
    assert.deepEqual([probe(hevc.body).codec, probe(hevc.body).tag], ['hevc', 'hvc1']);

    const part = await bytes(`${hub.url}${chunk.playUrl}`, { headers: { range: 'bytes=0-99' } });
    assert.equal(part.status, 206);
    assert.equal(part.body.length, 100);
    assert.ok(part.body.equals(h264.body.subarray(0, 100)));
    assert.equal(part.headers.get('content-range'), `bytes 0-99/${h264.body.length}`);
  });

  it('keeps an incident with its clip and the device’s own video_understand answer', async () => {
    const [newest] = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].recent_chunks as { name: string; started_at: string }[];
    const client = await mqttClient(hub.brokerUrl);
    try {
      const at = new Date(Date.parse(newest.started_at) + 500).toISOString();
      await publish(client, `devices/${DEVICE}/events/incident`, { timestamp: at, type: 'incident', message: 'door forced' });
    } finally {
      await endClient(client);
    }
    const alert = await waitFor(
      'the incident understood',
      async () => {
        const alerts = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].anomaly_alerts as {
          video_understanding?: { status: string };
        }[];
        const a = alerts.find((x) => x.video_understanding && x.video_understanding.status !== 'pending');
        return a;
      },
      20_000,
      250,
    );
    const u = alert.video_understanding as unknown as {
      status: string;
      chunk: string;
      result: { chunks: string[]; person_max_count: number; description: null; description_reason: string };
    };
    assert.equal(u.status, 'ok', JSON.stringify(u));
    assert.equal(u.chunk, newest.name);
    assert.ok(u.result.chunks.includes(newest.name), JSON.stringify(u.result));
    // Layer 0 runs no detector: the device says it saw nothing, and that no describer is configured.
    assert.equal(u.result.person_max_count, 0);
    assert.equal(u.result.description, null);
    assert.match(u.result.description_reason, /describer/i);
  });

  it('with the device stopped, list_recording_chunks comes from SSH and pull-recording over SFTP', async () => {
    const live = await callTool(hub.url, DEVICE, 'list_recording_chunks', { limit: 50 });
    assert.equal(live.status, 200, live.text);
    assert.equal(live.body.result.source, 'device');
    await device.stop();
    const names = new Set((live.body.result.chunks as { name: string }[]).map((c) => c.name));

    const viaSsh = await callTool(hub.url, DEVICE, 'list_recording_chunks', { limit: 50 });
    assert.equal(viaSsh.status, 200, viaSsh.text);
    assert.equal(viaSsh.body.fallback, true);
    assert.equal(viaSsh.body.result.source, 'ssh_sftp');
    for (const c of viaSsh.body.result.chunks as { name: string }[]) if (names.has(c.name)) names.delete(c.name);
    assert.equal(names.size, 0, `every chunk the device listed is found over SSH (missing ${[...names].join(', ')})`);

    const pulled = await bytes(`${hub.url}/pull-recording?target=${DEVICE}&which=latest`);
    assert.equal(pulled.status, 200, pulled.body.toString().slice(0, 300));
    assert.equal(probe(pulled.body).codec, 'h264');
    assert.match(pulled.headers.get('x-lookout-chunk-source') ?? '', /ssh/);
  });
});
