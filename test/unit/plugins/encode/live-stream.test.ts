import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { request, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { accessUnitsOf, nalType, HEVC_NAL } from '../../../../lib/media/hevc-annexb.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { loadScenario } from '../../../../plugins/camera/src/scenario-files.js';
import { SimFrameSource } from '../../../../plugins/camera/src/sim-frame-source.js';
import { EncodePipeline } from '../../../../plugins/encode/src/encode-pipeline.js';
import { FfmpegHevcEncoder } from '../../../../plugins/encode/src/ffmpeg-hevc-encoder.js';
import { LiveJpeg } from '../../../../plugins/encode/src/live-jpeg.js';
import { LiveServer } from '../../../../plugins/encode/src/live-server.js';
import { jpegSize } from '../../../../plugins/encode/src/jpeg-size.js';
import type { EncoderSettings } from '../../../../plugins/encode/src/video-encoder.js';
import { waitFor } from '../../../support/wait-for.js';
import { keyframePositions, probeHevc } from './hevc-probe.js';

const SETTINGS: EncoderSettings = { width: 320, height: 240, fps: 5, gop: 5, bitrateKbps: 300, rateControl: 'VBR' };

function makePipeline(settings: EncoderSettings = SETTINGS): EncodePipeline {
  return new EncodePipeline({
    source: new SimFrameSource(loadScenario('people-crossing').scenario),
    encoder: new FfmpegHevcEncoder({ maxQueuedFrames: 2 }),
    settings,
    gopMaxBytes: 8 * 1024 * 1024,
    statsWindowMs: 2000,
    restart: { minMs: 200, maxMs: 1000 },
  });
}

let pipeline: EncodePipeline;
let live: LiveServer;
let port: number;

before(async () => {
  pipeline = makePipeline();
  live = new LiveServer(pipeline, { host: '127.0.0.1', port: 0, maxClients: 2, maxBufferBytes: 1024 * 1024, guard: () => undefined });
  port = await live.listen();
});
after(async () => {
  await live.close();
  await pipeline.stop();
});

function get(path: string, method = 'GET'): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** The body of a live response for `ms`, then the connection is closed. */
async function readFor(res: IncomingMessage, ms: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  await sleep(ms);
  res.destroy();
  return Buffer.concat(chunks);
}

async function json(res: IncomingMessage): Promise<{ error: { code: string; message: string } }> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

test('before the encoder runs: the live stream and get_live_jpeg say there is no video', async () => {
  const res = await get('/live.h265');
  assert.equal(res.statusCode, 503);
  assert.equal((await json(res)).error.code, 'live_stream_unavailable');
  const jpeg = new LiveJpeg(pipeline, { timeoutMs: 5000, maxWaiting: 1 });
  await assert.rejects(jpeg.take({ w: 160, q: 80 }), (e: unknown) => e instanceof LookoutError && e.code === 'encoder_unavailable');
  pipeline.start();
  await assert.rejects(
    jpeg.take({ w: 160, q: 80 }),
    (e: unknown) => e instanceof LookoutError && e.code === 'live_stream_unavailable',
    'running, no keyframe yet',
  );
});

test('GET /live.h265 starts with the latest GOP (a keyframe with its parameter sets) and decodes with a keyframe every gop', async () => {
  await waitFor(() => pipeline.latestGop().length >= 3, 'a GOP of 3 pictures', 10_000);
  const res = await get('/live.h265');
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'video/H265');
  const body = await readFor(res, 2500);
  const units = accessUnitsOf(body);
  assert.ok(units.length >= 8, `${units.length} pictures in 2.5 s (the GOP, then live)`);
  assert.ok(units[0].keyframe, 'the body starts on a keyframe');
  assert.equal(nalType(units[0].data.subarray(4)), HEVC_NAL.VPS, 'with its VPS first');
  const frames = await probeHevc(body);
  assert.ok(frames.length >= units.length - 1);
  const keys = keyframePositions(frames);
  assert.ok(keys.length >= 2);
  for (let i = 1; i < keys.length; i++) assert.equal(keys[i] - keys[i - 1], 5, 'keyframe interval = gop');
  assert.deepEqual([frames[0].width, frames[0].height], [320, 240]);
});

test('the live server bounds its clients (503 beyond) and answers only its path and GET', async () => {
  const a = await get('/live.h265');
  const b = await get('/live.h265');
  assert.deepEqual([a.statusCode, b.statusCode], [200, 200]);
  const c = await get('/live.h265');
  assert.equal(c.statusCode, 503);
  const err = await json(c);
  assert.equal(err.error.code, 'live_stream_unavailable');
  assert.match(err.error.message, /2 clients/);
  a.destroy();
  await waitFor(() => live.stats().clients === 1, 'the closed client to be let go');
  const d = await get('/live.h265');
  assert.equal(d.statusCode, 200);
  b.destroy();
  d.destroy();
  assert.equal((await get('/other')).statusCode, 404);
  assert.equal((await get('/live.h265', 'POST')).statusCode, 405);
  await waitFor(() => live.stats().clients === 0, 'every client let go');
});

test('get_live_jpeg: a JPEG of the asked width of the newest picture; one decode at a time, a bounded queue', async () => {
  const jpeg = new LiveJpeg(pipeline, { timeoutMs: 10_000, maxWaiting: 2 });
  const one = await jpeg.take({ w: 160, q: 70 });
  assert.equal(one.content_type, 'image/jpeg');
  const bytes = Buffer.from(one.jpeg_base64, 'base64');
  assert.equal(bytes.length, one.bytes);
  assert.deepEqual(jpegSize(bytes), { width: 160, height: 120 });
  assert.deepEqual([one.width, one.height], [160, 120]);
  assert.ok(Date.now() - Date.parse(one.captured_at) < 3000, 'a recent picture');
  // 1 decoding + 2 waiting; the other 3 are told to retry.
  const results = await Promise.allSettled([64, 96, 128, 192, 224, 256].map((w) => jpeg.take({ w, q: 50 })));
  const busy = results.filter((r) => r.status === 'rejected' && (r.reason as LookoutError).code === 'device_busy');
  const ok = results.filter((r) => r.status === 'fulfilled');
  assert.equal(ok.length, 3);
  assert.equal(busy.length, 3);
  assert.equal((ok[0] as PromiseFulfilledResult<{ width: number }>).value.width, 64);
});

test('get_live_jpeg gives up after its timeout rather than waiting on', async () => {
  const jpeg = new LiveJpeg(pipeline, { timeoutMs: 30, maxWaiting: 2 });
  await assert.rejects(
    jpeg.take({ w: 320, q: 90 }),
    (e: unknown) => e instanceof LookoutError && e.code === 'live_stream_unavailable' && /cancelled|within|waited/.test(e.message),
  );
});

const python = spawnSync('python3', ['--version']).status === 0;

test(
  'a client that reads slower than the stream is dropped, not buffered',
  { skip: python ? false : 'python3 is not installed (the slow client sets SO_RCVBUF)' },
  async () => {
    // All keyframes at 15 fps: about 400 KB/s, so the kernel's buffers fill in seconds.
    const fast = makePipeline({ width: 320, height: 240, fps: 15, gop: 1, bitrateKbps: 20_000, rateControl: 'VBR' });
    const server = new LiveServer(fast, { host: '127.0.0.1', port: 0, maxClients: 2, maxBufferBytes: 65_536, guard: () => undefined });
    const fastPort = await server.listen();
    fast.start();
    // A client with a tiny receive window that never reads (Node cannot set SO_RCVBUF on a TCP socket).
    const client = spawn(
      'python3',
      [
        '-c',
        `import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(('127.0.0.1', ${fastPort}))
s.sendall(b'GET /live.h265 HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n')
time.sleep(60)`,
      ],
      { stdio: 'ignore' },
    );
    try {
      await waitFor(() => server.stats().clients === 1, 'the slow client', 5000);
      await waitFor(() => server.stats().slow_dropped === 1, 'the slow client to be dropped', 40_000);
      assert.equal(server.stats().clients, 0);
    } finally {
      client.kill('SIGKILL');
      await server.close();
      await fast.stop();
    }
  },
);
