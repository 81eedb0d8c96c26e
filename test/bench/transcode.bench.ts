/**
 * The media plugin's transcode and its cache:
 *  - transcode of a 60 s chunk through the hub's transcode cache beside plain ffmpeg running the
 *    very same command on the same file (ratio; aim ≤ 1.1×): what the cache adds around ffmpeg;
 *  - time to first byte of a cached playUrl over real HTTP on loopback (aim ≤ 5 ms).
 *
 *   node dist/test/bench/transcode.bench.js     (npm run bench -- transcode)
 *   LOOKOUT_BENCH_CHUNK_S=60 LOOKOUT_BENCH_SIZE=640x360 LOOKOUT_BENCH_FPS=15 LOOKOUT_BENCH_RUNS=3
 */
import { execFile } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MemoryBus } from '../../core/src/bus/memory-bus.js';
import { createLogger } from '../../core/src/log/logger.js';
import { loadHubPluginSet } from '../../hub/src/hub-plugin-set.js';
import { startHub } from '../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../hub/src/state/memory-state-store.js';
import media from '../../hub/plugins/media/src/index.js';
import { transcodeArgs } from '../../hub/plugins/media/src/transcode-args.js';
import { TranscodeCache, type ClipSource } from '../../hub/plugins/media/src/transcode-cache.js';
import { scratchDir } from '../support/scratch-dir.js';
import { makeChunk } from '../unit/hub/plugins/media/chunk-fixtures.js';

const run = promisify(execFile);
const SECONDS = Number(process.env.LOOKOUT_BENCH_CHUNK_S ?? 60);
const [W, H] = (process.env.LOOKOUT_BENCH_SIZE ?? '640x360').split('x').map(Number);
const FPS = Number(process.env.LOOKOUT_BENCH_FPS ?? 15);
const RUNS = Number(process.env.LOOKOUT_BENCH_RUNS ?? 3);
const TTFB_REQUESTS = 300;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (n: number) => n.toFixed(2);

/** Plain ffmpeg, the same arguments the cache gives it (and the same -hide_banner -nostdin -loglevel error runFfmpeg adds). */
async function plainFfmpeg(input: string, output: string): Promise<number> {
  const t = process.hrtime.bigint();
  await run('ffmpeg', ['-hide_banner', '-nostdin', '-loglevel', 'error', ...transcodeArgs('h264', input, output, FPS)]);
  return Number(process.hrtime.bigint() - t) / 1e6;
}

async function viaCache(dir: string, input: string, i: number): Promise<number> {
  const cache = new TranscodeCache({ dir: join(dir, `cache-${i}`), maxBytes: 2e9, concurrency: 1, timeoutMs: 600_000 });
  await cache.init();
  const source = async (): Promise<ClipSource> => ({ path: input, fps: FPS, release: async () => undefined });
  const t = process.hrtime.bigint();
  await cache.get(`bench/${i}.h265`, 'h264', source);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  await rm(join(dir, `cache-${i}`), { recursive: true, force: true });
  return ms;
}

function firstByte(agent: Agent, url: string): Promise<{ ttfb: number; status: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let ttfb = 0;
      res.once('data', () => (ttfb = Number(process.hrtime.bigint() - started) / 1e6));
      res.on('data', () => undefined);
      res.on('end', () => resolve({ ttfb, status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const scratch = await scratchDir('transcode-bench-');
  try {
    const rec = join(scratch.dir, 'devices', 'cam-bench', 'recordings');
    const made = process.hrtime.bigint();
    const chunk = await makeChunk(rec, { seconds: SECONDS, fps: FPS, width: W, height: H });
    console.log(
      `chunk: ${SECONDS} s, ${W}x${H} @ ${FPS} fps, ${(chunk.size_bytes / 1e6).toFixed(2)} MB (made in ${f(Number(process.hrtime.bigint() - made) / 1e9)} s)`,
    );
    const input = join(rec, chunk.name);

    // Alternate the two so that the machine's load drifts onto both alike.
    const plain: number[] = [];
    const cached: number[] = [];
    await plainFfmpeg(input, join(scratch.dir, 'warm.mp4'));
    for (let i = 0; i < RUNS; i++) {
      plain.push(await plainFfmpeg(input, join(scratch.dir, `plain-${i}.mp4`)));
      cached.push(await viaCache(scratch.dir, input, i));
    }
    const ratio = median(cached) / median(plain);
    console.log(`transcode (H.264 veryfast, faststart), median of ${RUNS}:`);
    console.log(`  plain ffmpeg        ${f(median(plain))} ms   (runs: ${plain.map(f).join(', ')})`);
    console.log(`  transcode cache     ${f(median(cached))} ms   (runs: ${cached.map(f).join(', ')})`);
    console.log(`  ratio               ${ratio.toFixed(3)}×   (aim ≤ 1.1×) ${ratio <= 1.1 ? 'ok' : 'OVER'}`);

    // Cached playUrl: a real hub, the clip built once, then time to first byte of each request.
    const registryFile = join(scratch.dir, 'registry.json');
    await writeFile(registryFile, JSON.stringify({ devices: [{ device_id: 'cam-bench', ips: ['127.0.0.1'], labels: ['bench'] }] }));
    const set = await loadHubPluginSet();
    const hub = await startHub({
      bus: new MemoryBus(),
      port: 0,
      dataDir: join(scratch.dir, 'hub'),
      registryFile,
      stateStore: new MemoryStateStore(),
      defaultMetrics: false,
      logger: createLogger({ level: 'silent' }),
      plugins: [...set.plugins.filter((p) => p.name !== 'media' && p.name !== 'device-ssh'), media],
      essential: set.essential,
      env: { LOOKOUT_MEDIA_LOCAL_RECORDINGS: join(scratch.dir, 'devices', '{device}', 'recordings') },
    });
    try {
      const url = `${hub.url}/media/clips/cam-bench/${chunk.name.replace('.h265', '.mp4')}`;
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      const first = await firstByte(agent, url);
      if (first.status !== 200) throw new Error(`playUrl answered ${first.status}`);
      for (let i = 0; i < 30; i++) await firstByte(agent, url);
      const ttfb: number[] = [];
      for (let i = 0; i < TTFB_REQUESTS; i++) ttfb.push((await firstByte(agent, url)).ttfb);
      const sorted = [...ttfb].sort((a, b) => a - b);
      const p99 = sorted[Math.ceil(sorted.length * 0.99) - 1];
      const ranged: number[] = [];
      for (let i = 0; i < 100; i++) {
        const t = process.hrtime.bigint();
        await new Promise<void>((resolve, reject) => {
          const req = request(url, { agent, headers: { Range: 'bytes=0-65535' } }, (res) => {
            res.resume();
            res.on('end', () => resolve());
          });
          req.on('error', reject);
          req.end();
        });
        ranged.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      console.log(`cached playUrl over HTTP (keep-alive, ${TTFB_REQUESTS} requests):`);
      console.log(`  first build         ${f(first.ttfb)} ms to first byte (transcode included)`);
      console.log(`  time to first byte  median ${f(median(ttfb))} ms, p99 ${f(p99)} ms   (aim ≤ 5 ms) ${median(ttfb) <= 5 ? 'ok' : 'OVER'}`);
      console.log(`  64 KiB range        median ${f(median(ranged))} ms (whole answer)`);
      agent.destroy();
    } finally {
      await hub.close();
    }
  } finally {
    await scratch.cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
