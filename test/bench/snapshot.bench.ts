/**
 * GET /stream/snapshot latency per step of its chain, as a client sees it, against a real
 * `lookout-edge` (camera, encode, recorder) and a real sshd on 127.0.0.1:
 * - tool: the device's get_live_jpeg;
 * - live tail, warm: the hub's tail already holds the GOP (the tool step first fails: dead port);
 * - live tail, cold: a fresh tail (the previous one closed when idle) connects and waits for its keyframe;
 * - ssh: a second hub without tails, whose tool port is dead: SFTP listing, download of the newest chunk, decode.
 * Baseline: plain ffmpeg turning the same GOP (read from the device's /live.h265) into a JPEG, and
 * for ssh the same over the newest chunk read from disk; the ratio is step / baseline.
 *
 *   node dist/test/bench/snapshot.bench.js      (npm run bench -- snapshot)
 *   LOOKOUT_BENCH_SNAPSHOTS=30 LOOKOUT_BENCH_RES=640x480 LOOKOUT_BENCH_FPS=10 node dist/test/bench/snapshot.bench.js
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHUNK_NAME_PATTERN } from '../../core/src/contracts/recording-chunk.js';
import { loadHubPluginSet } from '../../hub/src/hub-plugin-set.js';
import type { RunningHub } from '../../hub/src/start-hub.js';
import deviceSsh from '../../hub/plugins/device-ssh/src/index.js';
import snapshots from '../../hub/plugins/snapshots/src/index.js';
import { GopTail } from '../../hub/plugins/snapshots/src/gop-tail.js';
import { startDeviceProcess, type DeviceProcess } from '../support/device-process.js';
import { freePort } from '../support/free-port.js';
import { startSshd, type Sshd } from '../support/sshd.js';
import { api, testHub, waitFor } from '../support/hub-helpers.js';

const N = Number(process.env.LOOKOUT_BENCH_SNAPSHOTS ?? 15);
const COLD_N = Math.max(3, Math.floor(N / 3));
const RES = process.env.LOOKOUT_BENCH_RES ?? '320x240';
const FPS = process.env.LOOKOUT_BENCH_FPS ?? '5';
const GOP = process.env.LOOKOUT_BENCH_GOP ?? '10';
const WIDTH = Number(RES.split('x')[0]);
const IDLE_MS = 1000;
const DEVICE = 'cam-bench';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
function p90(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.9) - 1)];
}

async function timedSnapshot(base: string): Promise<{ ms: number; source: string | null; tail: string | null }> {
  const started = performance.now();
  const res = await fetch(`${base}/stream/snapshot?target=${DEVICE}&w=${WIDTH}&q=80`);
  await res.arrayBuffer();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`snapshot answered ${res.status}`);
  return { ms, source: res.headers.get('x-lookout-snapshot-source'), tail: res.headers.get('x-lookout-snapshot-tail') };
}

/** Plain ffmpeg: the last picture of an Annex B stream as a JPEG (what the hub runs, without the hub). */
function ffmpegJpeg(input: Buffer, pictures: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('ffmpeg', [
      ...['-hide_banner', '-nostdin', '-loglevel', 'error', '-f', 'hevc', '-i', 'pipe:0'],
      ...['-vf', `select=gte(n\\,${pictures - 1}),scale=${WIDTH}:-2`, '-frames:v', '1', '-q:v', '5', '-f', 'mjpeg', 'pipe:1'],
    ]);
    child.stdout.resume();
    child.stdin.end(input);
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`ffmpeg exited ${code}`))));
  });
}

/**
 * The device's current GOP, read from its live stream as the hub's tail reads it, cut at `pictures`:
 * a tail asked at a random moment holds (GOP + 1) / 2 pictures on average.
 */
function gopFromDevice(url: string, pictures: number): Promise<{ stream: Buffer; pictures: number }> {
  return new Promise((resolve, reject) => {
    const tail = new GopTail(64 << 20);
    const req = request(url, (res) => {
      res.on('data', (piece: Buffer) => {
        tail.push(piece);
        const gop = tail.snapshot();
        if (gop && gop.pictures >= pictures) {
          req.destroy();
          resolve({ stream: gop.stream, pictures: gop.pictures });
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-bench-'));
  const recordings = join(dir, 'recordings');
  mkdirSync(recordings);
  let sshd: Sshd | undefined;
  let hub: RunningHub | undefined;
  let sshHub: RunningHub | undefined;
  let device: DeviceProcess | undefined;
  try {
    sshd = await startSshd();
    const knownHosts = join(dir, 'known_hosts');
    writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
    const deadPort = await freePort();
    const registry = (file: string, toolPort?: number) =>
      writeFileSync(
        file,
        JSON.stringify({
          devices: [
            {
              device_id: DEVICE,
              ips: ['127.0.0.1'],
              ...(toolPort ? { tool_port: toolPort } : {}),
              ssh_port: sshd!.port,
              ssh_user: sshd!.user,
              recordings_root: recordings,
            },
          ],
        }),
      );
    const set = await loadHubPluginSet();
    const sshEnv = { LOOKOUT_SSH_KEY_FILE: sshd.clientKeyPath, LOOKOUT_SSH_KNOWN_HOSTS: knownHosts };
    const hubDir = join(dir, 'hub');
    mkdirSync(hubDir);
    registry(join(hubDir, 'registry.json'));
    hub = await testHub({
      dataDir: hubDir,
      registryFile: join(hubDir, 'registry.json'),
      plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'snapshots'), deviceSsh, snapshots],
      essential: set.essential,
      env: { ...sshEnv, LOOKOUT_HUB_SNAPSHOT_TAIL_IDLE_MS: String(IDLE_MS) },
    });
    const sshHubDir = join(dir, 'ssh-hub');
    mkdirSync(sshHubDir);
    registry(join(sshHubDir, 'registry.json'), deadPort);
    sshHub = await testHub({
      dataDir: sshHubDir,
      registryFile: join(sshHubDir, 'registry.json'),
      plugins: [...set.plugins.filter((p) => p.name !== 'device-ssh' && p.name !== 'snapshots'), deviceSsh, snapshots],
      essential: set.essential,
      env: { ...sshEnv, LOOKOUT_HUB_SNAPSHOT_TAILS: '0' },
    });
    const image = join(dir, 'image.json');
    writeFileSync(
      image,
      JSON.stringify({
        name: 'bench-camera',
        role: 'camera',
        plugins: ['die-temp', 'identity', 'system-health', 'status', 'firmware', 'camera-profile', 'camera', 'encode', 'recorder'],
        essential: ['identity'],
      }),
    );
    device = await startDeviceProcess({
      deviceId: DEVICE,
      mqtt: hub.brokerUrl,
      image,
      layer: 'layer0',
      env: { ENCODE_RESOLUTION: RES, ENCODE_FPS: FPS, ENCODE_GOP: GOP, LIVE_PORT: '0', CHUNK_SECONDS: '2', RECORDINGS_DIR: recordings },
      readyTimeoutMs: 30_000,
    });
    const livePort = device.ready.ports.live;
    await waitFor('a snapshot from the tool', async () => (await timedSnapshot(hub!.url).catch(() => undefined))?.source === 'tool', 20_000, 200);
    await waitFor('a complete chunk', () => readdirSync(recordings).some((n) => CHUNK_NAME_PATTERN.test(n)), 20_000, 200);

    const rows: { step: string; times: number[]; baseline: number }[] = [];
    const gop = await gopFromDevice(`http://127.0.0.1:${livePort}/live.h265`, Math.ceil((Number(GOP) + 1) / 2));
    const base: number[] = [];
    for (let i = 0; i < N; i++) base.push(await ffmpegJpeg(gop.stream, gop.pictures));
    const gopBaseline = median(base);

    const tool: number[] = [];
    for (let i = 0; i < N; i++) {
      const r = await timedSnapshot(hub.url);
      if (r.source !== 'tool') throw new Error(`expected the tool, got ${r.source}`);
      tool.push(r.ms);
    }
    rows.push({ step: 'tool (get_live_jpeg)', times: tool, baseline: gopBaseline });

    // The tool server unreachable from now on: the tail answers.
    registry(join(hubDir, 'registry.json'), deadPort);
    const cold: number[] = [];
    for (let i = 0; i < COLD_N; i++) {
      await sleep(IDLE_MS + 1200); // the previous tail closed when idle
      const r = await timedSnapshot(hub.url);
      if (r.source !== 'live_tail' || r.tail !== 'cold') throw new Error(`expected a cold tail, got ${r.source}/${r.tail}`);
      cold.push(r.ms);
    }
    const warm: number[] = [];
    for (let i = 0; i < N; i++) {
      const r = await timedSnapshot(hub.url);
      if (r.source !== 'live_tail' || r.tail !== 'warm') throw new Error(`expected a warm tail, got ${r.source}/${r.tail}`);
      warm.push(r.ms);
    }
    rows.push({ step: 'live tail, warm', times: warm, baseline: gopBaseline });
    rows.push({ step: 'live tail, cold', times: cold, baseline: gopBaseline });

    const ssh: number[] = [];
    for (let i = 0; i < N; i++) {
      const r = await timedSnapshot(sshHub.url);
      if (r.source !== 'ssh') throw new Error(`expected ssh, got ${r.source}`);
      ssh.push(r.ms);
    }
    const newest = readdirSync(recordings)
      .filter((n) => CHUNK_NAME_PATTERN.test(n))
      .sort()
      .at(-1)!;
    const chunk = readFileSync(join(recordings, newest));
    const chunkTail = new GopTail(64 << 20);
    chunkTail.push(chunk);
    chunkTail.flush();
    const last = chunkTail.snapshot()!;
    const sshBase: number[] = [];
    for (let i = 0; i < N; i++) sshBase.push(await ffmpegJpeg(last.stream, last.pictures));
    rows.push({ step: 'ssh (list + sftp + decode)', times: ssh, baseline: median(sshBase) });

    const events = (await api(hub.url, '/debug/events?kind=live/warm_ready&limit=100')).body as { events: unknown[] };
    console.log(`snapshot ${RES} at ${FPS} fps, GOP ${GOP} (${gop.pictures} pictures, ${gop.stream.length} bytes in the baseline GOP), w=${WIDTH} q=80`);
    console.log(`baseline: plain ffmpeg GOP → JPEG median ${gopBaseline.toFixed(1)} ms; newest chunk's last GOP ${median(sshBase).toFixed(1)} ms`);
    console.log('step                          n    median ms   p90 ms   baseline ms   ratio');
    for (const r of rows) {
      console.log(
        `${r.step.padEnd(28)} ${String(r.times.length).padStart(3)} ${median(r.times).toFixed(1).padStart(11)} ${p90(r.times).toFixed(1).padStart(8)} ${r.baseline
          .toFixed(1)
          .padStart(13)} ${(median(r.times) / r.baseline).toFixed(2).padStart(7)}×`,
      );
    }
    console.log(`(live tail and ssh include the failed steps before them; live/warm_ready events: ${events.events.length})`);
  } finally {
    await device?.stop();
    await hub?.close();
    await sshHub?.close();
    await sshd?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
