/**
 * RTSP preview: time to first frame and CPU per viewer, on a real lookout-edge with the rtsp-camera
 * image (320x240 at 5 fps, keyframe every 5 pictures unless told).
 *
 * Time to first frame: from spawning ffmpeg on rtsp://…/preview until it has decoded one picture
 * (`-frames:v 1`, it exits then), median of a few runs over TCP and over UDP, and over TCP with
 * ffmpeg's stream probing cut short (`-probesize 32 -analyzeduration 0`). Baseline: the same
 * ffmpeg decoding its first picture of the same H.265 stream from a local file, which is what
 * ffmpeg itself costs (start, probing, decoder set-up) without the network and the server.
 *
 * CPU per viewer: the device process's own utime+stime (its encoder ffmpeg is a child and not
 * counted) over a window with 0, 1 and 5 viewers (`ffmpeg -c copy -f null`, over TCP); per viewer =
 * (5 viewers - 1 viewer) / 4. The 0-viewer figure is the baseline (camera, encoder pipe, parsing).
 *
 *   node dist/test/bench/rtsp.bench.js     (npm run bench -- rtsp)
 *   LOOKOUT_BENCH_SECONDS=20 LOOKOUT_BENCH_FPS=15 LOOKOUT_BENCH_RESOLUTION=1280x720 node dist/test/bench/rtsp.bench.js
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmbeddedBroker } from '../../hub/src/broker/embedded-broker.js';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { startDeviceProcess } from '../support/device-process.js';

const SECONDS = Number(process.env.LOOKOUT_BENCH_SECONDS ?? 8);
const FPS = process.env.LOOKOUT_BENCH_FPS ?? '5';
const RESOLUTION = process.env.LOOKOUT_BENCH_RESOLUTION ?? '320x240';
const RUNS = Number(process.env.LOOKOUT_BENCH_RUNS ?? 5);
const TICKS_PER_S = 100;

async function cpuOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
}

function timed(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`ffmpeg exited ${code}: ${err.slice(-300)}`))));
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** A few seconds of the live H.265 stream, for the baseline's local file. */
function grabLive(port: number, ms: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const req = request({ host: '127.0.0.1', port, path: '/live.h265' }, (res) => {
      res.on('data', (c: Buffer) => chunks.push(c));
      setTimeout(() => {
        res.destroy();
        resolve(Buffer.concat(chunks));
      }, ms);
    });
    req.on('error', reject);
    req.end();
  });
}

async function cpuWindow(pid: number, viewers: ChildProcess[]): Promise<number> {
  await sleep(2000); // the viewers connect and get past their first GOP
  const before = await cpuOf(pid);
  await sleep(SECONDS * 1000);
  const used = (await cpuOf(pid)) - before;
  for (const v of viewers) v.kill('SIGKILL');
  await sleep(500);
  return (used / SECONDS) * 100; // percent of one core
}

const broker = await EmbeddedBroker.start({ port: 0 });
const device = await startDeviceProcess({
  deviceId: 'cam-rtsp-bench',
  image: join(packageRoot(), 'test', 'fixtures', 'images', 'rtsp-camera.json'),
  mqtt: broker.url,
  env: { ENCODE_RESOLUTION: RESOLUTION, ENCODE_FPS: FPS, ENCODE_GOP: process.env.LOOKOUT_BENCH_GOP ?? FPS },
});
const dir = await mkdtemp(join(tmpdir(), 'rtsp-bench-'));
try {
  const url = `rtsp://127.0.0.1:${device.ready.ports.rtsp}/preview`;
  const pid = device.child.pid!;
  // Wait for the stream (the first DESCRIBE waits for a keyframe).
  await timed(['-v', 'error', '-rtsp_transport', 'tcp', '-i', url, '-frames:v', '1', '-f', 'null', '-']);

  const results: Record<string, number> = {};
  for (const transport of ['tcp', 'udp']) {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push(await timed(['-v', 'error', '-rtsp_transport', transport, '-i', url, '-frames:v', '1', '-f', 'null', '-']));
    results[`first_frame_${transport}_ms`] = Math.round(median(times));
  }
  // ffmpeg's default probing reads a few seconds of a 5 fps stream before it decodes anything (it
  // estimates the frame rate); with probing cut short the figure is the server's part.
  const quick: number[] = [];
  for (let i = 0; i < RUNS; i++)
    quick.push(
      await timed(['-v', 'error', '-rtsp_transport', 'tcp', '-probesize', '32', '-analyzeduration', '0', '-i', url, '-frames:v', '1', '-f', 'null', '-']),
    );
  results.first_frame_tcp_no_probe_ms = Math.round(median(quick));
  const file = join(dir, 'live.h265');
  await writeFile(file, await grabLive(device.ready.ports.live, 3000));
  const base: number[] = [];
  for (let i = 0; i < RUNS; i++) base.push(await timed(['-v', 'error', '-f', 'hevc', '-i', file, '-frames:v', '1', '-f', 'null', '-']));
  results.first_frame_baseline_local_file_ms = Math.round(median(base));

  const viewers = (n: number): ChildProcess[] =>
    Array.from({ length: n }, () =>
      spawn('ffmpeg', ['-v', 'error', '-rtsp_transport', 'tcp', '-i', url, '-c', 'copy', '-f', 'null', '-'], { stdio: 'ignore' }),
    );
  const cpu0 = await cpuWindow(pid, []);
  const cpu1 = await cpuWindow(pid, viewers(1));
  const cpu5 = await cpuWindow(pid, viewers(5));
  results.device_cpu_pct_0_viewers_baseline = Number(cpu0.toFixed(2));
  results.device_cpu_pct_1_viewer = Number(cpu1.toFixed(2));
  results.device_cpu_pct_5_viewers = Number(cpu5.toFixed(2));
  results.cpu_pct_per_viewer = Number(((cpu5 - cpu1) / 4).toFixed(2));

  console.log(`RTSP preview ${RESOLUTION} at ${FPS} fps, ${SECONDS} s CPU windows, ${RUNS} runs per first-frame median`);
  console.table(results);
  console.log(JSON.stringify({ bench: 'rtsp', resolution: RESOLUTION, fps: Number(FPS), ...results }));
} finally {
  await device.stop();
  await broker.close();
  await rm(dir, { recursive: true, force: true });
}
