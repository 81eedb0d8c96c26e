/**
 * GET /stream/snapshot down its whole chain against a real `lookout-edge` device running the encode
 * plugin (real libx265, its real GET /live.h265 and get_live_jpeg): the device's tool first; with its
 * tool server unreachable (the registry file points the hub at a dead port) the hub's live tail,
 * cold then warm; with the device stopped the SSH step (no device-ssh here) and the spec's 503
 * live_jpeg_unavailable_mcp_and_ssh_failed listing each step. w and q bounds, the ring's events and
 * GET /fleet/snapshots too.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { loadHubPluginSet } from '../../../hub/src/hub-plugin-set.js';
import snapshots from '../../../hub/plugins/snapshots/src/index.js';
import { startDeviceProcess, type DeviceProcess } from '../../support/device-process.js';
import { freePort } from '../../support/free-port.js';
import { api, testHub, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

const DEVICE = 'cam-snap';

function jpegSize(jpeg: Buffer): { width: number; height: number } {
  const out = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', 'pipe:0'], { input: jpeg }).toString().trim();
  const [width, height] = out.split(',').map(Number);
  return { width, height };
}

async function snapshot(
  base: string,
  query: string,
): Promise<{ status: number; type: string; source: string | null; tail: string | null; jpeg: Buffer; json: any }> {
  const res = await fetch(`${base}/stream/snapshot?${query}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  return {
    status: res.status,
    type,
    source: res.headers.get('x-lookout-snapshot-source'),
    tail: res.headers.get('x-lookout-snapshot-tail'),
    jpeg: bytes,
    json: type.includes('json') ? JSON.parse(bytes.toString()) : undefined,
  };
}

async function ring(base: string, kind: string): Promise<{ kind: string; device_id?: string; message: string; details?: any }[]> {
  const r = await api(base, `/debug/events?kind=${encodeURIComponent(kind)}&limit=200`);
  assert.equal(r.status, 200, r.text);
  return r.body.events;
}

describe('GET /stream/snapshot against a real device', () => {
  let hub: RunningHub;
  let device: DeviceProcess;
  let dir: string;
  let registryFile: string;
  let deadPort: number;

  const writeRegistry = (toolPort?: number) =>
    writeFileSync(
      registryFile,
      JSON.stringify({
        devices: [
          { device_id: DEVICE, ips: ['127.0.0.1'], labels: ['front_door'], ...(toolPort ? { tool_port: toolPort } : {}) },
          // Named, never running: every step fails for it.
          { device_id: 'cam-gone', ips: ['127.0.0.1'], labels: ['front_door'], tool_port: deadPort },
        ],
      }),
    );

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-chain-'));
    registryFile = join(dir, 'registry.json');
    deadPort = await freePort();
    writeRegistry();
    const set = await loadHubPluginSet();
    hub = await testHub({
      dataDir: dir,
      registryFile,
      toolTimeoutMs: 3000,
      plugins: [...set.plugins.filter((p) => p.name !== 'snapshots' && p.name !== 'device-ssh'), snapshots],
      essential: set.essential,
      env: {
        LOOKOUT_HUB_SNAPSHOT_TAIL_WARM_TIMEOUT_MS: '3000',
        LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_AGE_MS: '1500',
        LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MS: '100',
        LOOKOUT_HUB_SNAPSHOT_TAIL_BACKOFF_MAX_MS: '400',
        LOOKOUT_HUB_SNAPSHOT_TAIL_STALL_MS: '2000',
        // Long enough that the warm snapshot below finds the tail the cold one opened on a loaded machine.
        LOOKOUT_HUB_SNAPSHOT_TAIL_IDLE_MS: '4000',
      },
    });
    const image = join(dir, 'encode-camera.json');
    writeFileSync(
      image,
      JSON.stringify({
        name: 'encode-camera',
        role: 'camera',
        plugins: ['die-temp', 'identity', 'system-health', 'status', 'firmware', 'camera-profile', 'camera', 'encode'],
        essential: ['identity'],
      }),
    );
    device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image,
      layer: 'layer0',
      role: 'front_door',
      // The fleet secret: the live stream then wants the hub's derived token from whoever presents one.
      env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0', LOOKOUT_FLEET_SECRET: TEST_FLEET_SECRET },
      readyTimeoutMs: 30_000,
    });
    await waitFor(
      'the device registered with its live port',
      async () => {
        const r = await api(hub.url, '/fleet/registry');
        const d = (r.body.shadows ?? []).find((x: { device_id: string }) => x.device_id === DEVICE);
        return d?.ports?.live ? d : undefined;
      },
      20_000,
      200,
    );
  });

  after(async () => {
    await device?.stop();
    await hub?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses w and q out of bounds, and a target it does not know', async () => {
    for (const q of ['w=8', 'w=5000', 'w=abc', 'w=', 'q=0', 'q=101', 'q=50.5']) {
      const r = await snapshot(hub.url, `target=${DEVICE}&${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.json.error.code, 'bad_request', q);
    }
    assert.equal((await snapshot(hub.url, 'w=320')).status, 400);
    const unknown = await snapshot(hub.url, 'target=cam-nobody');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, 'target_unknown');
  });

  it('serves the device tool first, at the asked width', async () => {
    // Until the encoder has its first picture the tool fails and the next steps answer.
    const r = await waitFor('a snapshot from the tool', async () => {
      const s = await snapshot(hub.url, `target=${DEVICE}&w=160&q=70`);
      return s.status === 200 && s.source === 'tool' ? s : undefined;
    });
    assert.equal(r.type, 'image/jpeg');
    assert.equal(r.source, 'tool');
    assert.deepEqual(jpegSize(r.jpeg), { width: 160, height: 120 });
  });

  it('GET /fleet/snapshots: a JPEG per device of the label, an error for the one that is gone', async () => {
    const r = await api(hub.url, '/fleet/snapshots?shadow=front_door&w=96');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.device_count, 2);
    assert.equal(r.body.ok_count, 1);
    const ok = r.body.devices[DEVICE];
    assert.equal(ok.ok, true);
    assert.equal(ok.source, 'tool');
    assert.deepEqual(jpegSize(Buffer.from(ok.jpeg_base64, 'base64')), { width: 96, height: 72 });
    const gone = r.body.devices['cam-gone'];
    assert.equal(gone.ok, false);
    assert.equal(gone.error.code, 'live_jpeg_unavailable_mcp_and_ssh_failed');
    const empty = await api(hub.url, '/fleet/snapshots?shadow=no_such_label');
    assert.deepEqual([empty.body.device_count, empty.body.devices], [0, {}]);
  });

  it('with the tool server unreachable, serves from the live tail: cold, then warm', async () => {
    writeRegistry(deadPort);
    // A tail the first snapshots may have opened is closed once idle (LOOKOUT_HUB_SNAPSHOT_TAIL_IDLE_MS).
    await new Promise((r) => setTimeout(r, 4500));
    const cold = await snapshot(hub.url, `target=${DEVICE}&w=320&q=80`);
    assert.equal(cold.status, 200, cold.json ? JSON.stringify(cold.json) : '');
    assert.equal(cold.source, 'live_tail');
    assert.equal(cold.tail, 'cold');
    assert.deepEqual(jpegSize(cold.jpeg), { width: 320, height: 240 });
    const warm = await snapshot(hub.url, `target=${DEVICE}&w=200&q=30`);
    assert.equal(warm.source, 'live_tail');
    assert.equal(warm.tail, 'warm');
    assert.deepEqual(jpegSize(warm.jpeg), { width: 200, height: 150 });

    const warmed = (await ring(hub.url, 'live/warm_ready')).filter((e) => e.device_id === DEVICE);
    assert.ok(warmed.length >= 1, 'live/warm_ready recorded');
    const fails = (await ring(hub.url, 'snapshot_fail')).filter((e) => e.device_id === DEVICE);
    assert.ok(
      fails.some((e) => e.details?.step === 'tool' && e.details?.code === 'device_unreachable'),
      JSON.stringify(fails),
    );
  });

  it('with the device stopped, walks tool, live tail and SSH down to the 503', async () => {
    await device.stop();
    // The tail's last picture ages past LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_AGE_MS.
    await new Promise((r) => setTimeout(r, 1600));
    const r = await snapshot(hub.url, `target=${DEVICE}&w=160`);
    assert.equal(r.status, 503);
    assert.equal(r.json.error.code, 'live_jpeg_unavailable_mcp_and_ssh_failed');
    const steps = r.json.error.details.steps as { step: string; code: string; message: string }[];
    assert.deepEqual(
      steps.map((s) => s.step),
      ['tool', 'live_tail', 'ssh'],
    );
    assert.equal(steps[0].code, 'device_unreachable');
    assert.equal(steps[1].code, 'live_stream_unavailable');
    assert.equal(steps[2].code, 'ssh_not_configured');
    const sshFails = (await ring(hub.url, 'ssh_jpeg_fail')).filter((e) => e.device_id === DEVICE);
    assert.ok(sshFails.length >= 1);
    const tailFails = (await ring(hub.url, 'snapshot_fail')).filter((e) => e.device_id === DEVICE && e.details?.step === 'live_tail');
    assert.ok(tailFails.length >= 1);
  });
});
