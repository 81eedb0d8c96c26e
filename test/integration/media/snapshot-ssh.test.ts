/**
 * The SSH step of GET /stream/snapshot against a real OpenSSH server and real chunks: a real
 * `lookout-edge` (camera, encode, recorder) records 1 s chunks, then stops, so its tool server and
 * live stream are gone; the hub's device-ssh plugin lists the recordings root over SFTP and the
 * snapshot comes from the newest complete chunk's last picture. A truncated newest chunk still gives
 * a picture; a corrupt one, and sshd stopped, give the 503 with the SSH step's own failure.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CHUNK_NAME_PATTERN } from '../../../core/src/contracts/recording-chunk.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { packageRoot } from '../../../core/src/paths/package-root.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import deviceSsh from '../../../hub/plugins/device-ssh/src/index.js';
import snapshots from '../../../hub/plugins/snapshots/src/index.js';
import { startDeviceProcess } from '../../support/device-process.js';
import { freePort } from '../../support/free-port.js';
import { startSshd, type Sshd } from '../../support/sshd.js';
import { api, testHub, waitFor } from '../../support/hub-helpers.js';

const RECORDING_IMAGE = join(packageRoot(), 'test', 'fixtures', 'images', 'recording-camera.json');
const DEVICE = 'cam-ssh-snap';

function jpegWidth(jpeg: Buffer): number {
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width', '-of', 'csv=p=0', 'pipe:0'], { input: jpeg }).toString().trim());
}

const chunksIn = (dir: string) =>
  readdirSync(dir)
    .filter((n) => CHUNK_NAME_PATTERN.test(n))
    .sort();

describe('GET /stream/snapshot over SSH', () => {
  let hub: RunningHub;
  let sshd: Sshd;
  let dir: string;
  let recordings: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-ssh-'));
    recordings = join(dir, 'recordings');
    mkdirSync(recordings);
    sshd = await startSshd();
    const knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);

    const registryFile = join(dir, 'registry.json');
    writeFileSync(
      registryFile,
      JSON.stringify({
        devices: [
          // The tool port is dead and the device will be stopped: only SSH can answer.
          {
            device_id: DEVICE,
            ips: ['127.0.0.1'],
            tool_port: await freePort(),
            ssh_port: sshd.port,
            ssh_user: sshd.user,
            recordings_root: recordings,
          },
        ],
      }),
    );
    const set = await loadHubPluginSet();
    hub = await testHub({
      dataDir: dir,
      registryFile,
      toolTimeoutMs: 2000,
      plugins: [...set.plugins.filter((p) => p.name !== 'snapshots' && p.name !== 'device-ssh'), deviceSsh, snapshots],
      essential: set.essential,
      env: {
        LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath,
        LOOKOUT_SSH_KNOWN_HOSTS: knownHosts,
        LOOKOUT_SSH_CONNECT_TIMEOUT_MS: '3000',
        // No pooled connection outlives its use: stopping sshd then refuses the next one.
        LOOKOUT_SSH_IDLE_S: '0',
        LOOKOUT_HUB_SNAPSHOT_TAIL_WARM_TIMEOUT_MS: '1000',
        LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MS: '100',
        LOOKOUT_HUB_SNAPSHOT_SSH_TIMEOUT_MS: '15000',
      },
    });
    const device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image: RECORDING_IMAGE,
      layer: 'layer0',
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0', CHUNK_SECONDS: '1', RECORDINGS_DIR: recordings },
      readyTimeoutMs: 30_000,
    });
    try {
      await waitFor('two complete chunks', () => chunksIn(recordings).length >= 2, 30_000, 200);
    } finally {
      await device.stop();
    }
  });

  after(async () => {
    await hub?.close();
    await sshd?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the newest complete chunk\u2019s last picture when the tool server and the live stream are gone', async () => {
    const newest = chunksIn(recordings).at(-1)!;
    const res = await fetch(`${hub.url}/stream/snapshot?target=${DEVICE}&w=160&q=60`);
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200, body.toString());
    assert.equal(res.headers.get('content-type'), 'image/jpeg');
    assert.equal(res.headers.get('x-lookout-snapshot-source'), 'ssh');
    assert.equal(res.headers.get('x-lookout-snapshot-chunk'), newest);
    assert.equal(jpegWidth(body), 160);
    const fails = (await api(hub.url, '/debug/events?kind=snapshot_fail&limit=50')).body.events.filter((e: { device_id: string }) => e.device_id === DEVICE);
    assert.deepEqual(new Set(fails.map((e: { details: { step: string } }) => e.details.step)), new Set(['tool', 'live_tail']));
  });

  it('a truncated newest chunk still gives its last whole picture', async () => {
    const newest = chunksIn(recordings).at(-1)!;
    const bytes = readFileSync(join(recordings, newest));
    const cut = `99990101T000000000Z_000001.h265`;
    writeFileSync(join(recordings, cut), bytes.subarray(0, Math.floor(bytes.length * 0.7)));
    try {
      const res = await fetch(`${hub.url}/stream/snapshot?target=${DEVICE}&w=128`);
      const body = Buffer.from(await res.arrayBuffer());
      assert.equal(res.status, 200, body.toString());
      assert.equal(res.headers.get('x-lookout-snapshot-chunk'), cut);
      assert.equal(jpegWidth(body), 128);
    } finally {
      rmSync(join(recordings, cut));
    }
  });

  it('a corrupt newest chunk: 503 with the SSH step\u2019s recording_unreadable, in the ring as ssh_jpeg_fail', async () => {
    const bad = `99990101T000000000Z_000002.h265`;
    writeFileSync(join(recordings, bad), Buffer.alloc(4096, 0x55));
    try {
      const r = await api(hub.url, `/stream/snapshot?target=${DEVICE}`);
      assert.equal(r.status, 503, r.text);
      assert.equal(r.body.error.code, 'live_jpeg_unavailable_mcp_and_ssh_failed');
      const ssh = r.body.error.details.steps.find((s: { step: string }) => s.step === 'ssh');
      assert.equal(ssh.code, 'recording_unreadable', JSON.stringify(ssh));
      const events = (await api(hub.url, '/debug/events?kind=ssh_jpeg_fail&limit=50')).body.events;
      assert.ok(events.some((e: { device_id: string; details: { code: string } }) => e.device_id === DEVICE && e.details.code === 'recording_unreadable'));
    } finally {
      rmSync(join(recordings, bad));
    }
  });

  it('sshd down too: 503 listing tool, live tail and SSH failures', async () => {
    await sshd.stop();
    const r = await api(hub.url, `/stream/snapshot?target=${DEVICE}&w=64&q=10`);
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.error.code, 'live_jpeg_unavailable_mcp_and_ssh_failed');
    const steps = r.body.error.details.steps as { step: string; code: string }[];
    assert.deepEqual(
      steps.map((s) => s.step),
      ['tool', 'live_tail', 'ssh'],
    );
    assert.match(steps[2].code, /^ssh_/);
  });
});
