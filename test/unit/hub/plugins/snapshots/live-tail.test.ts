/**
 * LiveTail and LiveTails against real HTTP on 127.0.0.1 speaking the device's GET /live.h265
 * protocol with real libx265 bytes (the encode plugin's own server is exercised end to end in
 * test/integration/media/snapshot-chain.test.ts; here the peer misbehaves on purpose: drops, 401, junk).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { jpegFromHevc } from '../../../../../lib/media/jpeg-from-hevc.js';
import type { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { LiveTail, type LiveTailOptions } from '../../../../../hub/plugins/snapshots/src/live-tail.js';
import { LiveTails } from '../../../../../hub/plugins/snapshots/src/live-tails.js';
import { freePort } from '../../../../support/free-port.js';

const stream = execFileSync('ffmpeg', [
  ...['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=5', '-t', '2'],
  ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', 'keyint=5:min-keyint=5:scenecut=0:repeat-headers=1:log-level=error', '-f', 'hevc', 'pipe:1'],
]);

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(handler: Handler): Promise<{ server: Server; url: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/live.h265`, requests };
}

const close = (s: Server) =>
  new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  });

function tailOf(url: string, extra: Partial<LiveTailOptions> = {}): LiveTail & { warms: boolean[] } {
  const warms: boolean[] = [];
  const tail = new LiveTail({
    deviceId: 'cam-t',
    url,
    token: 'tool-token-0123456789',
    maxBytes: 1 << 20,
    backoffMinMs: 50,
    backoffMaxMs: 200,
    stallMs: 2000,
    onWarm: (reconnected) => warms.push(reconnected),
    ...extra,
  });
  return Object.assign(tail, { warms });
}

const signal = () => new AbortController().signal;

describe('LiveTail', () => {
  const servers: Server[] = [];
  const tails: LiveTail[] = [];
  after(async () => {
    for (const t of tails) t.close();
    await Promise.all(servers.map(close));
  });

  it('warms on the first keyframe with the bearer token, and its GOP decodes', async () => {
    // The whole stream, then the connection stays open as a live one would.
    const peer = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'video/H265' });
      res.write(stream);
    });
    servers.push(peer.server);
    const tail = tailOf(peer.url);
    tails.push(tail);
    await tail.ready(5000, signal());
    assert.equal(tail.warm, true);
    assert.deepEqual(tail.warms, [false]);
    assert.equal(peer.requests[0].headers.authorization, 'Bearer tool-token-0123456789');
    const gop = tail.snapshot(5000);
    assert.ok(gop.pictures >= 1);
    const jpeg = await jpegFromHevc(gop.stream, { width: 64, quality: 50, timeoutMs: 10_000 });
    assert.equal(jpeg[0], 0xff);
    assert.throws(
      () => tail.snapshot(0, Date.now() + 10),
      (e: LookoutError) => e.code === 'live_stream_unavailable' && /ms old/.test(e.message),
    );
  });

  it('reconnects when the device ends the stream, and says so when warm again', async () => {
    const peer = await serve((_req, res) => {
      res.writeHead(200);
      res.end(stream);
    });
    servers.push(peer.server);
    const tail = tailOf(peer.url);
    tails.push(tail);
    await tail.ready(5000, signal());
    const deadline = Date.now() + 5000;
    while (!tail.warms.includes(true) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(peer.requests.length >= 2, `${peer.requests.length} connections`);
    assert.equal(tail.warms[0], false);
    assert.ok(tail.warms.slice(1).every((r) => r));
  });

  it('a refused credential: no keyframe, the HTTP status in the error, retried with backoff', async () => {
    const peer = await serve((_req, res) => {
      res.writeHead(401);
      res.end('{"error":{"code":"unauthorized"}}');
    });
    servers.push(peer.server);
    const tail = tailOf(peer.url);
    tails.push(tail);
    await assert.rejects(tail.ready(400, signal()), (e: LookoutError) => e.code === 'live_stream_unavailable' && /HTTP 401/.test(e.message));
    assert.ok(peer.requests.length >= 2 && peer.requests.length <= 6, `${peer.requests.length} attempts in 400 ms with 50-200 ms backoff`);
  });

  it('cuts a connection that sends bytes without a picture past the bound', async () => {
    const peer = await serve((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(300_000, 0x55));
    });
    servers.push(peer.server);
    const tail = tailOf(peer.url, { maxBytes: 100_000 });
    tails.push(tail);
    await assert.rejects(tail.ready(500, signal()), /no complete picture in 100000 bytes/);
  });

  it('nothing listening: the connect error; closing rejects waiters and stops retrying', async () => {
    const tail = tailOf(`http://127.0.0.1:${await freePort()}/live.h265`);
    await assert.rejects(tail.ready(200, signal()), /ECONNREFUSED/);
    const waiting = tail.ready(5000, signal());
    tail.close();
    await assert.rejects(waiting, /closed/);
    const aborter = new AbortController();
    const other = tailOf(`http://127.0.0.1:${await freePort()}/live.h265`);
    tails.push(other);
    const w = other.ready(5000, aborter.signal);
    aborter.abort();
    await assert.rejects(w, /cancelled/);
  });
});

describe('LiveTails', () => {
  let deadUrl: string;
  before(async () => {
    deadUrl = `http://127.0.0.1:${await freePort()}/live.h265`;
  });

  it('bounds the open tails (least recently used closed first), closes idle ones, replaces a moved one', () => {
    const made: LiveTail[] = [];
    const pool = new LiveTails({
      max: 2,
      idleMs: 1000,
      create: (deviceId, url) => {
        const t = tailOf(url, { deviceId, backoffMinMs: 10_000, backoffMaxMs: 10_000 });
        made.push(t);
        return t;
      },
    });
    const a = pool.get('a', deadUrl, 0);
    pool.get('b', deadUrl, 10);
    assert.equal(pool.get('a', deadUrl, 20), a, 'the same tail while its URL stays');
    pool.get('c', deadUrl, 30);
    assert.deepEqual([pool.has('a'), pool.has('b'), pool.has('c')], [true, false, true]);
    const moved = pool.get('a', deadUrl.replace('/live.h265', '/other'), 40);
    assert.notEqual(moved, a);
    pool.sweep(1035);
    assert.deepEqual([pool.has('a'), pool.has('c')], [true, false]);
    pool.closeAll();
    assert.equal(pool.size, 0);
    assert.equal(made.length, 4);
  });
});
