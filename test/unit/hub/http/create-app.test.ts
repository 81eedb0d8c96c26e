import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { definePlugin } from '../../../../core/src/plugin/context.js';
import { loadHubPluginSet } from '../../../../hub/src/hub-plugin-set.js';
import { reply } from '../../../../core/src/hub-routes/route-reply.js';
import type { RunningHub } from '../../../../hub/src/start-hub.js';
import { api, sleep, testHub } from '../../../support/hub-helpers.js';

const TOKEN = 'test-token-0123456789';

/** A hub plugin whose routes exercise the core's paths: typed failures, crashes, replies, bodies. */
const probe = definePlugin({
  name: 'probe',
  version: '1.0.0',
  core: '^1',
  routes: [
    { method: 'GET', path: '/probe/typed', summary: 'throws a typed error' },
    { method: 'GET', path: '/probe/crash', summary: 'throws an unexpected error' },
    { method: 'GET', path: '/probe/reply', summary: 'answers a RouteReply' },
    { method: 'GET', path: '/probe/items/:id', summary: 'path parameter' },
    { method: 'POST', path: '/probe/echo', summary: 'echoes a body', body: z.object({ name: z.string().min(1), count: z.number().int().min(0) }) },
    { method: 'GET', path: '/probe/plain', summary: 'an object with a body key stays JSON' },
  ],
  start(ctx) {
    ctx.routes.handle('GET', '/probe/typed', () => {
      throw new LookoutError('device_timeout', 'the probe device did not answer', { details: { tool: 'x', password: 'hunter2' } });
    });
    ctx.routes.handle('GET', '/probe/crash', () => {
      throw new Error('secret internals /etc/shadow');
    });
    ctx.routes.handle('GET', '/probe/reply', () => reply({ status: 202, body: 'accepted', type: 'text/plain', headers: { 'x-probe': '1' } }));
    ctx.routes.handle('GET', '/probe/items/:id', ({ params }) => ({ id: params.id }));
    ctx.routes.handle('POST', '/probe/echo', ({ body }) => ({ echoed: body }));
    ctx.routes.handle('GET', '/probe/plain', () => ({ body: 'x', status: 500 }));
  },
});

async function fullSet() {
  return [...(await loadHubPluginSet()).plugins, probe];
}

describe('hub HTTP core (in-process bus)', () => {
  let hub: RunningHub;
  let bus: MemoryBus;
  before(async () => {
    bus = new MemoryBus();
    hub = await testHub({ bus, plugins: await fullSet(), corsOrigins: ['https://ops.example'], bodyLimitBytes: 4096 });
  });
  after(async () => {
    await hub.close();
    await bus.close();
  });

  it('listens on loopback without a token', () => {
    assert.equal(hub.host, '127.0.0.1');
    assert.equal(hub.tokenRequired, false);
  });

  it('answers an unknown route 404 and a wrong method 405, as JSON error bodies', async () => {
    const nf = await api(hub.url, '/no/such/route');
    assert.equal(nf.status, 404);
    assert.equal(nf.body.error.code, 'not_found');
    assert.match(nf.headers.get('content-type') ?? '', /json/);
    const na = await api(hub.url, '/fleet/registry', { method: 'DELETE' });
    assert.equal(na.status, 405);
    assert.equal(na.body.error.code, 'method_not_allowed');
    assert.match(na.headers.get('allow') ?? '', /GET/);
  });

  it('turns a typed failure into its status and code, with secrets redacted from details', async () => {
    const r = await api(hub.url, '/probe/typed');
    assert.equal(r.status, 504);
    assert.deepEqual(r.body.error.code, 'device_timeout');
    assert.equal(r.body.error.message, 'the probe device did not answer');
    assert.equal(r.body.error.details.tool, 'x');
    assert.notEqual(r.body.error.details.password, 'hunter2');
  });

  it('answers an unexpected failure 500 internal without its message', async () => {
    const r = await api(hub.url, '/probe/crash');
    assert.equal(r.status, 500);
    assert.equal(r.body.error.code, 'internal');
    assert.doesNotMatch(r.text, /shadow|internals/);
    assert.match(r.body.error.message, new RegExp(r.headers.get('x-request-id')!));
  });

  it('sends a RouteReply with its status, type and headers; a plain object with a body key stays JSON', async () => {
    const r = await api(hub.url, '/probe/reply');
    assert.equal(r.status, 202);
    assert.equal(r.text, 'accepted');
    assert.equal(r.headers.get('x-probe'), '1');
    assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
    const plain = await api(hub.url, '/probe/plain');
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body, { body: 'x', status: 500 });
  });

  it('passes path parameters', async () => {
    const r = await api(hub.url, '/probe/items/abc-1');
    assert.deepEqual(r.body, { id: 'abc-1' });
  });

  it('checks a body against its schema and names the field at fault', async () => {
    const ok = await api(hub.url, '/probe/echo', { json: { name: 'a', count: 2 } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { echoed: { name: 'a', count: 2 } });
    const bad = await api(hub.url, '/probe/echo', { json: { name: 'a', count: -1 } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'bad_request');
    assert.equal(bad.body.error.details.field, 'body.count');
    assert.match(bad.body.error.message, /^body\.count: /);
    const missing = await api(hub.url, '/probe/echo', { method: 'POST' });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error.details.field, 'body');
  });

  it('refuses malformed JSON (400), a non-JSON type (415) and an oversized body (413)', async () => {
    const malformed = await api(hub.url, '/probe/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": ' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'bad_request');
    const text = await api(hub.url, '/probe/echo', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'name=a' });
    assert.equal(text.status, 415);
    assert.equal(text.body.error.code, 'unsupported_media_type');
    const big = await api(hub.url, '/probe/echo', { json: { name: 'x'.repeat(10_000), count: 1 } });
    assert.equal(big.status, 413);
    assert.equal(big.body.error.code, 'payload_too_large');
  });

  it('refuses a chunked body that grows past the limit before reading all of it', async () => {
    const url = new URL('/probe/echo', hub.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      // Written in pieces without a Content-Length: only the running count can stop it.
      for (let i = 0; i < 8; i++) req.write('x'.repeat(1024));
      req.end();
    });
    assert.equal(status, 413);
  });

  it('closes the connection after a 413 instead of reading the rest of the upload', async () => {
    // A client that goes on sending: with a declared length Node would drain it all, a paused
    // chunked body would hold the socket; both must end soon after the answer.
    for (const framing of ['Content-Length: 104857600', 'Transfer-Encoding: chunked']) {
      const socket = connect(hub.port, '127.0.0.1');
      socket.on('error', () => undefined);
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(`POST /probe/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
      const piece = Buffer.alloc(16 * 1024, 0x61);
      const framed = framing.startsWith('Transfer') ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece;
      let sent = 0;
      let isClosed = false;
      void closed.then(() => (isClosed = true));
      const deadline = Date.now() + 5000;
      while (!isClosed && Date.now() < deadline) {
        if (!socket.write(framed)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed, sleep(100)]);
        sent += piece.length;
      }
      socket.destroy();
      assert.match(answer, /^HTTP\/1\.1 413 /, framing);
      assert.match(answer, /connection: close/i, framing);
      assert.ok(isClosed, `${framing}: the hub kept the connection open (${sent} bytes sent)`);
      assert.ok(sent < 50 * 1024 * 1024, `${framing}: the hub read ${sent} bytes after refusing the body`);
    }
  });

  it('answers what Node refuses before routing (malformed request, headers too large) as JSON', async () => {
    const raw = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(hub.port, '127.0.0.1');
        let answer = '';
        socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
        socket.on('error', reject);
        socket.on('close', () => resolve(answer));
        socket.write(text);
      });
    for (const [request, status] of [
      ['GARBAGE\r\n\r\n', 400],
      [`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`, 431],
    ] as const) {
      const answer = await raw(request);
      assert.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `));
      assert.match(answer, /content-type: application\/json/i);
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(body.error.code, 'bad_request');
      assert.equal(typeof body.error.message, 'string');
    }
  });

  it('keeps a client request id and makes one otherwise', async () => {
    const mine = await api(hub.url, '/health', { headers: { 'x-request-id': 'abc.123' } });
    assert.equal(mine.headers.get('x-request-id'), 'abc.123');
    const made = await api(hub.url, '/health', { headers: { 'x-request-id': 'bad id with spaces' } });
    assert.match(made.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  });

  it('answers CORS preflights for the configured origin only', async () => {
    const pre = await api(hub.url, '/tools/call', { method: 'OPTIONS', headers: { origin: 'https://ops.example', 'access-control-request-method': 'POST' } });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers.get('access-control-allow-origin'), 'https://ops.example');
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Authorization/);
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    const simple = await api(hub.url, '/health', { headers: { origin: 'https://ops.example' } });
    assert.equal(simple.headers.get('access-control-allow-origin'), 'https://ops.example');
    const other = await api(hub.url, '/tools/call', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
    const otherGet = await api(hub.url, '/health', { headers: { origin: 'https://evil.example' } });
    assert.equal(otherGet.headers.get('access-control-allow-origin'), null);
  });

  it('times every route in /metrics by route template', async () => {
    await api(hub.url, '/probe/items/zz');
    const m = await api(hub.url, '/metrics');
    assert.equal(m.status, 200);
    assert.match(m.headers.get('content-type') ?? '', /text\/plain/);
    assert.match(m.text, /lookout_hub_http_request_duration_seconds_count\{method="GET",route="\/probe\/items\/:id",status="200"\} \d+/);
    assert.match(m.text, /lookout_hub_http_request_duration_seconds_count\{method="GET",route="unmatched",status="404"\} \d+/);
  });

  it('takes metric labels from known values only: no path, parameter, device id or topic a client made up', async () => {
    await api(hub.url, '/probe/items/label-probe-item');
    await api(hub.url, '/no/such/label-probe-path');
    await api(hub.url, '/fleet/mqtt/latest?device=label-probe-device&_=label-probe-param');
    await bus.publish(
      'devices/label-probe-cam/status',
      JSON.stringify({ state: 'online', thermal_state: 'NORMAL', die_temp_c: 40, timestamp: new Date().toISOString() }),
    );
    await bus.publish('devices/label-probe-cam/label-probe-topic', '{}');
    const m = (await api(hub.url, '/metrics')).text;
    assert.doesNotMatch(m, /label-probe/);
    const routes = new Set([...m.matchAll(/route="([^"]*)"/g)].map(([, r]) => r));
    const templates = new Set([...hub.runtime.routes.list().map((r) => r.decl.path), 'unmatched']);
    for (const r of routes) assert.ok(templates.has(r), `route label ${r} is a template`);
  });

  it('answers only loopback Host names without a token (DNS rebinding), as JSON errors', async () => {
    const port = new URL(hub.url).port;
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `[::1]:${port}`]) {
      assert.equal((await raw(hub.url, '/health', { host })).status, 200, host);
    }
    // Before: a hub without a token answered any Host, so a page on evil.example resolving to 127.0.0.1 could call tools.
    for (const host of ['evil.example', `evil.example:${port}`, '127.0.0.1.evil.example', 'localhost.evil.example']) {
      const r = await raw(hub.url, '/fleet/registry', { host });
      assert.equal(r.status, 403, host);
      assert.equal(r.body.error.code, 'forbidden');
    }
  });

  it('refuses a state-changing request from an origin CORS does not allow', async () => {
    const body = { name: 'x', count: 1 };
    // Before: a foreign page's POST ran (CORS only hid the answer from it).
    const evil = await api(hub.url, '/probe/echo', { json: body, headers: { origin: 'https://evil.example' } });
    assert.equal(evil.status, 403);
    assert.equal(evil.body.error.code, 'forbidden');
    const opaque = await api(hub.url, '/probe/echo', { json: body, headers: { origin: 'null' } });
    assert.equal(opaque.status, 403);
    const allowed = await api(hub.url, '/probe/echo', { json: body, headers: { origin: 'https://ops.example' } });
    assert.equal(allowed.status, 200);
    const same = await api(hub.url, '/probe/echo', { json: body, headers: { origin: hub.url } });
    assert.equal(same.status, 200);
    const none = await api(hub.url, '/probe/echo', { json: body });
    assert.equal(none.status, 200);
    // Reading is not changing: a GET from anywhere is answered, without CORS headers for a foreign origin.
    const read = await api(hub.url, '/fleet/registry', { headers: { origin: 'https://evil.example' } });
    assert.equal(read.status, 200);
  });
});

describe('hub Host names', () => {
  it('answers the names given with --host-name besides loopback ones, with or without a token', async () => {
    const bus = new MemoryBus();
    const hub = await testHub({ bus, hostNames: ['hub.lan', 'Ops.Example'] });
    const guarded = await testHub({ bus, token: TOKEN, host: '127.0.0.1' });
    const named = await testHub({ bus, token: TOKEN, host: '127.0.0.1', hostNames: ['hub.lan'] });
    try {
      assert.equal((await raw(hub.url, '/health', { host: 'hub.lan:8788' })).status, 200);
      assert.equal((await raw(hub.url, '/health', { host: 'ops.example' })).status, 200);
      assert.equal((await raw(hub.url, '/health', { host: 'evil.example' })).status, 403);
      // With a token the token guards; names are checked only when some were given.
      assert.equal((await raw(guarded.url, '/health', { host: 'hub.example' })).status, 200);
      assert.equal((await raw(named.url, '/health', { host: 'evil.example' })).status, 403);
      assert.equal((await raw(named.url, '/health', { host: 'hub.lan' })).status, 200);
    } finally {
      await Promise.all([hub.close(), guarded.close(), named.close()]);
      await bus.close();
    }
  });
});

/** A request with headers fetch() will not send as given (Host). */
function raw(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hub access with a token', () => {
  let hub: RunningHub;
  let bus: MemoryBus;
  before(async () => {
    bus = new MemoryBus();
    hub = await testHub({ bus, token: TOKEN, host: '127.0.0.1', plugins: await fullSet() });
  });
  after(async () => {
    await hub.close();
    await bus.close();
  });

  it('keeps /health public', async () => {
    const r = await api(hub.url, '/health');
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ok');
  });

  it('asks every other route for the bearer token', async () => {
    for (const path of [
      '/fleet/registry',
      '/fleet/mqtt/latest',
      '/fleet/mqtt/config',
      '/debug/events',
      '/fleet/health',
      '/openapi.json',
      '/metrics',
      '/no/such/route',
    ]) {
      const none = await api(hub.url, path);
      assert.equal(none.status, 401, path);
      assert.equal(none.body.error.code, 'unauthorized');
      assert.equal(none.headers.get('www-authenticate'), 'Bearer');
      const wrong = await api(hub.url, path, { token: `${TOKEN}x` });
      assert.equal(wrong.status, 401, path);
      const basic = await api(hub.url, path, { headers: { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` } });
      assert.equal(basic.status, 401, path);
    }
    const post = await api(hub.url, '/tools/call?target=x', { json: { tool: 't', arguments: {} } });
    assert.equal(post.status, 401);
    const ok = await api(hub.url, '/fleet/registry', { token: TOKEN });
    assert.equal(ok.status, 200);
    const nf = await api(hub.url, '/no/such/route', { token: TOKEN });
    assert.equal(nf.status, 404);
  });

  it('marks the token in OpenAPI and never shows it', async () => {
    const doc = await api(hub.url, '/openapi.json', { token: TOKEN });
    assert.deepEqual(doc.body.security, [{ bearer: [] }]);
    assert.deepEqual(doc.body.paths['/health'].get.security, []);
    assert.doesNotMatch(doc.text, new RegExp(TOKEN));
    const config = await api(hub.url, '/fleet/mqtt/config', { token: TOKEN });
    assert.doesNotMatch(config.text, new RegExp(TOKEN));
  });
});

describe('hub start-up checks', () => {
  it('refuses a non-loopback address without a token', async () => {
    await assert.rejects(
      testHub({ bus: new MemoryBus(), host: '0.0.0.0' }),
      (err: LookoutError) => err.code === 'config_invalid' && /--token/.test(err.message),
    );
  });

  it('refuses a short token and a bad device network before opening sockets', async () => {
    await assert.rejects(testHub({ bus: new MemoryBus(), token: 'short' }), (err: LookoutError) => err.code === 'config_invalid');
    await assert.rejects(
      testHub({ bus: new MemoryBus(), deviceNetworks: ['10.0.0.0/33'] }),
      (err: LookoutError) => err.code === 'config_invalid' && /10\.0\.0\.0\/33/.test(err.message),
    );
  });

  it('names a plugin set entry that does not exist', async () => {
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const path = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(path.join(tmpdir(), 'hub-set-'));
    const file = path.join(dir, 'set.json');
    writeFileSync(file, JSON.stringify({ name: 'broken', plugins: ['hub-meta', 'no-such-hub-plugin'] }));
    await assert.rejects(
      testHub({ bus: new MemoryBus(), pluginSet: file }),
      (err: LookoutError) => err.code === 'plugin_not_found' && /no-such-hub-plugin/.test(err.message),
    );
  });
});
