/**
 * Encoder CPU per second of video: the encode plugin's ffmpeg (libx265, fed paced frames from the
 * simulated camera over a pipe) beside plain `ffmpeg` encoding the very same frames from a file
 * with the same settings. The ratio is what the plugin's way of feeding costs the encoder (pipe,
 * pacing, flushing each picture); the Node side (rendering the scene, parsing the stream) is shown
 * apart, since a device's camera and hardware encoder do not spend it.
 *
 * Plugin: ffmpeg's utime+stime from /proc/<pid>/stat at the end of the measured run (it still runs).
 * Baseline: the child's utime+stime as the kernel adds it to ours when it is reaped (cutime+cstime
 * of /proc/self/stat), the same counters.
 *
 *   node dist/test/bench/encode.bench.js     (npm run bench -- encode)
 *   LOOKOUT_BENCH_SECONDS=20 LOOKOUT_BENCH_CASES=1920x1080@15:4000 node dist/test/bench/encode.bench.js
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadScenario } from '../../plugins/camera/src/scenario-files.js';
import { SimFrameSource } from '../../plugins/camera/src/sim-frame-source.js';
import type { Frame, FrameSource } from '../../plugins/camera/src/service.js';
import { EncodePipeline } from '../../plugins/encode/src/encode-pipeline.js';
import { libx265Args } from '../../plugins/encode/src/ffmpeg-args.js';
import { FfmpegHevcEncoder } from '../../plugins/encode/src/ffmpeg-hevc-encoder.js';
import type { EncoderSettings } from '../../plugins/encode/src/video-encoder.js';

const SECONDS = Number(process.env.LOOKOUT_BENCH_SECONDS ?? 8);
/** WIDTHxHEIGHT@FPS:KBPS: the tests' size, and a 720p profile at a camera's usual rate. */
const CASES = (process.env.LOOKOUT_BENCH_CASES ?? '320x240@5:300,1280x720@15:2000').split(',');
const TICKS_PER_S = 100; // getconf CLK_TCK on Linux

/** utime + stime of a process (fields 14 and 15 of /proc/<pid>/stat), seconds. */
async function cpuOf(pid: number | 'self', children = false): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [u, s] = children ? [fields[13], fields[14]] : [fields[11], fields[12]];
  return (Number(u) + Number(s)) / TICKS_PER_S;
}

/** The camera, with every frame it gives also appended to a file (the baseline encodes that file). */
class RecordingSource implements FrameSource {
  frames = 0;
  constructor(
    private readonly inner: SimFrameSource,
    private readonly out: NodeJS.WritableStream,
  ) {}
  get width() {
    return this.inner.width;
  }
  get height() {
    return this.inner.height;
  }
  get nominalFps() {
    return this.inner.nominalFps;
  }
  get intrinsics() {
    return this.inner.intrinsics;
  }
  async read(atMs?: number): Promise<Frame> {
    const frame = await this.inner.read(atMs);
    this.out.write(frame.data);
    this.frames++;
    return frame;
  }
  close() {
    return this.inner.close();
  }
}

async function benchCase(spec: string, dir: string): Promise<void> {
  const [, w, h, f, kbps] = /^(\d+)x(\d+)@(\d+):(\d+)$/.exec(spec) ?? [];
  if (!kbps) throw new Error(`bench case ${spec}: give WIDTHxHEIGHT@FPS:KBPS`);
  const fps = Number(f);
  const settings: EncoderSettings = { width: Number(w), height: Number(h), fps, gop: 2 * fps, bitrateKbps: Number(kbps), rateControl: 'VBR' };
  const file = join(dir, 'frames.bgr');
  const out = createWriteStream(file);
  const source = new RecordingSource(new SimFrameSource(loadScenario('people-crossing').scenario), out);
  const encoder = new FfmpegHevcEncoder({ maxQueuedFrames: 2 });
  const pipeline = new EncodePipeline({ source, encoder, settings, gopMaxBytes: 64 * 1024 * 1024, statsWindowMs: 5000, restart: { minMs: 1000, maxMs: 1000 } });

  // The plugin's way: paced frames over a pipe, for SECONDS of wall time.
  const nodeBefore = process.cpuUsage();
  pipeline.start();
  await sleep(SECONDS * 1000);
  const pluginCpu = await cpuOf(encoder.pid!);
  const { frames: pictures, dropped, bitrate_kbps } = pipeline.stats();
  const node = process.cpuUsage(nodeBefore);
  await pipeline.stop();
  await new Promise<void>((r) => out.end(r));
  const fed = source.frames;
  const pluginVideoS = pictures / settings.fps;

  // Baseline: plain ffmpeg, the same frames from the file, the same arguments, as fast as it goes.
  const args = libx265Args(settings, { width: source.width, height: source.height, pixelFormat: 'bgr24' }).map((a) => (a === 'pipe:0' ? file : a));
  const before = await cpuOf('self', true);
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('ffmpeg', ['-y', ...args.map((a) => (a === 'pipe:1' ? '/dev/null' : a))], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`baseline ffmpeg exited with ${code}`))));
  });
  const baselineWall = (performance.now() - started) / 1000;
  const baselineCpu = (await cpuOf('self', true)) - before;
  const baselineVideoS = fed / settings.fps;

  const perS = (cpu: number, video: number) => (cpu / video).toFixed(3);
  const plugin = pluginCpu / pluginVideoS;
  const baseline = baselineCpu / baselineVideoS;
  console.log(`\n${w}x${h} at ${fps} fps, gop ${settings.gop}, ${settings.bitrateKbps} kbps VBR; source 640x640 BGR scaled by ffmpeg`);
  console.log(
    `  plugin   : ${pictures} pictures (${pluginVideoS.toFixed(1)} s of video, ${dropped} dropped, ${bitrate_kbps} kbps) ffmpeg CPU ${pluginCpu.toFixed(2)} s = ${perS(pluginCpu, pluginVideoS)} CPU-s per video-s`,
  );
  console.log(
    `  baseline : ${fed} frames (${baselineVideoS.toFixed(1)} s of video) ffmpeg CPU ${baselineCpu.toFixed(2)} s = ${perS(baselineCpu, baselineVideoS)} CPU-s per video-s (wall ${baselineWall.toFixed(2)} s)`,
  );
  console.log(`  ratio plugin/baseline: ${(plugin / baseline).toFixed(2)}`);
  console.log(
    `  node side (scene render + Annex B parsing, not an encoder cost): ${((node.user + node.system) / 1e6 / pluginVideoS).toFixed(3)} CPU-s per video-s`,
  );
  await rm(file, { force: true });
}

const dir = await mkdtemp(join(tmpdir(), 'lookout-encode-bench-'));
try {
  console.log(`encoder CPU per second of video, ${SECONDS} s per case (libx265 -preset ultrafast -tune zerolatency)`);
  for (const spec of CASES) await benchCase(spec, dir);
} finally {
  await rm(dir, { recursive: true, force: true });
}
