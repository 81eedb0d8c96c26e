import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../core/src/bus/memory-bus.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { api, testHub } from '../../support/hub-helpers.js';

/**
 * Every route of the default plugin set: it is listed here with its 400 cases (a test fails when a
 * route is added without an entry; a route that takes no input has none: an undeclared parameter
 * is ignored) and it appears in /openapi.json with its parameters.
 */
const BAD_REQUESTS: Record<string, { path: string; init?: Parameters<typeof api>[2]; field: string }[]> = {
  'GET /health': [],
  'GET /fleet/readiness': [
    { path: '/fleet/readiness?device=a%20b', field: 'query.device' },
    { path: '/fleet/readiness?device=a%2Fb', field: 'query.device' },
  ],
  'GET /fleet/grade': [],
  'GET /': [],
  'GET /console/:file': [],
  'GET /tools/list': [
    { path: '/tools/list', field: 'query.target' },
    { path: '/tools/list?target=', field: 'query.target' },
  ],
  'GET /stream/live/mp4': [
    { path: '/stream/live/mp4', field: 'query.target' },
    { path: `/stream/live/mp4?target=${'x'.repeat(257)}`, field: 'query.target' },
  ],
  'GET /fleet/events': [
    { path: '/fleet/events?kind=weather', field: 'query.kind' },
    { path: '/fleet/events?device=a%2Fb', field: 'query.device' },
  ],
  'GET /fleet/history': [
    { path: '/fleet/history', field: 'query.device' },
    { path: '/fleet/history?device=cam-1&since=1e3', field: 'query.since' },
  ],
  'GET /fleet/ocr': [
    { path: '/fleet/ocr', field: 'query.target' },
    { path: '/fleet/ocr?target=', field: 'query.target' },
    { path: '/fleet/ocr?target=cam-1&limit=0', field: 'query.limit' },
    { path: '/fleet/ocr?target=cam-1&limit=1e2', field: 'query.limit' },
  ],
  'POST /fleet/validate': [
    { path: '/fleet/validate?target=', init: { method: 'POST' }, field: 'query.target' },
    { path: `/fleet/validate?target=${'x'.repeat(257)}`, init: { method: 'POST' }, field: 'query.target' },
  ],
  'GET /openapi.json': [],
  'GET /metrics': [],
  'GET /debug/events': [
    { path: '/debug/events?limit=0', field: 'query.limit' },
    { path: '/debug/events?limit=abc', field: 'query.limit' },
    // Integers are parsed as the schema declares them, not through Number().
    { path: '/debug/events?limit=0x10', field: 'query.limit' },
    { path: '/debug/events?limit=1e3', field: 'query.limit' },
    { path: '/debug/events?limit=%2B5', field: 'query.limit' },
    { path: '/debug/events?limit=5.0', field: 'query.limit' },
    { path: '/debug/events?limit=%205', field: 'query.limit' },
    { path: '/debug/events?limit=1&limit=2', field: 'query.limit' },
    { path: '/debug/events?kind=tool_call,', field: 'query.kind' },
    { path: '/debug/events?since=yesterday', field: 'query.since' },
    { path: '/debug/events?kind=nope', field: 'query.kind' },
    { path: '/debug/events?device=a%2Fb', field: 'query.device' },
  ],
  'GET /fleet/mqtt/latest': [
    { path: '/fleet/mqtt/latest?device=a%2Bb', field: 'query.device' },
    { path: '/fleet/mqtt/latest?stale=maybe', field: 'query.stale' },
  ],
  'GET /fleet/mqtt/config': [],
  'GET /fleet/registry': [
    { path: '/fleet/registry?label=', field: 'query.label' },
    { path: '/fleet/registry?device=a%23', field: 'query.device' },
  ],
  'GET /fleet/health': [{ path: '/fleet/health?device=a%20b', field: 'query.device' }],
  'GET /fleet/playback-ready': [
    { path: '/fleet/playback-ready?limit=0', field: 'query.limit' },
    { path: '/fleet/playback-ready?limit=1e1', field: 'query.limit' },
    { path: '/fleet/playback-ready?justified=yes', field: 'query.justified' },
  ],
  'GET /fleet/recorder-inventory': [{ path: '/fleet/recorder-inventory?shadow=', field: 'query.shadow' }],
  'GET /pull-recording': [
    { path: '/pull-recording', field: 'query.target' },
    { path: '/pull-recording?target=cam-1&which=oldest', field: 'query.which' },
  ],
  'GET /media/clips/:device/:file': [
    { path: '/media/clips/cam-1/..%2F..%2Fetc%2Fpasswd.mp4', field: 'params.file' },
    { path: '/media/clips/cam-1/a.h265.avi', field: 'params.file' },
  ],
  'POST /media/clips/sign': [
    { path: '/media/clips/sign', init: { json: { device: 'cam-1', file: '../etc/passwd' } }, field: 'body.file' },
    { path: '/media/clips/sign', init: { json: { device: 'a/b', file: 'x.mp4' } }, field: 'body.device' },
    { path: '/media/clips/sign', init: { json: { device: 'cam-1', file: 'x.mp4', ttl_s: 86_401 } }, field: 'body.ttl_s' },
  ],
  'GET /stream/snapshot': [
    { path: '/stream/snapshot?w=100', field: 'query.target' },
    { path: '/stream/snapshot?target=cam-1&w=4000', field: 'query.w' },
    { path: '/stream/snapshot?target=cam-1&w=0x40', field: 'query.w' },
    { path: '/stream/snapshot?target=cam-1&q=0', field: 'query.q' },
    { path: '/stream/snapshot?target=cam-1&q=50.5', field: 'query.q' },
  ],
  'GET /fleet/snapshots': [{ path: '/fleet/snapshots?w=8', field: 'query.w' }],
  'GET /camera/profile': [
    { path: '/camera/profile', field: 'query.target' },
    { path: '/camera/profile?target=', field: 'query.target' },
  ],
  'PUT /camera/profile': [
    { path: '/camera/profile', init: { method: 'PUT', json: { fps: 5 } }, field: 'query.target' },
    { path: '/camera/profile?target=cam-1', init: { method: 'PUT', json: { fps: 0 } }, field: 'body.fps' },
    { path: '/camera/profile?target=cam-1', init: { method: 'PUT', json: { codec: 'MJPEG' } }, field: 'body.codec' },
    { path: '/camera/profile?target=cam-1', init: { method: 'PUT', json: { colour: 'red' } }, field: 'body.colour' },
    { path: '/camera/profile?target=cam-1', init: { method: 'PUT', json: {} }, field: 'body' },
  ],
  'GET /stream/live/status': [
    { path: '/stream/live/status?limit=0', field: 'query.limit' },
    { path: '/stream/live/status?limit=1e1', field: 'query.limit' },
    { path: '/stream/live/status?shadow=', field: 'query.shadow' },
  ],
  'GET /stream/live/info': [{ path: '/stream/live/info', field: 'query.target' }],
  'POST /a2a/sign': [
    { path: '/a2a/sign', init: { json: { path: '/a2a/query' } }, field: 'body.method' },
    { path: '/a2a/sign', init: { json: { method: 'POST', path: '/a2a/query?q=peer_hello' } }, field: 'body.path' },
    { path: '/a2a/sign', init: { json: { method: 'POST', path: '/a2a/query', query: { q: 5 } } }, field: 'body.query.q' },
    { path: '/a2a/sign', init: { json: { method: 'POST', path: '/tools/call' } }, field: 'body.path' },
  ],
  'DELETE /fleet/registry/labels/:label': [{ path: '/fleet/registry/labels/lobby?to=', init: { method: 'DELETE' }, field: 'query.to' }],
  'POST /a2a/query': [
    { path: '/a2a/query?q=peer_hello', init: { method: 'POST' }, field: 'query.target' },
    { path: '/a2a/query?q=peer_goodbye&target=cam-1', init: { method: 'POST' }, field: 'query.q' },
  ],
  // JSON-RPC: a bad message is a JSON-RPC error, not the hub's 400 (test/integration/tools/hub-mcp-server.test.ts).
  'POST /mcp': [],
  // Passed through to the builder, which checks what it gets (test/integration/builder/builder-hub-proxy.test.ts).
  'GET /api/*rest': [],
  'POST /api/*rest': [],
  'PUT /api/*rest': [],
  'DELETE /api/*rest': [],
  'GET /fleet/history/people': [
    { path: '/fleet/history/people', field: 'query.target' },
    { path: '/fleet/history/people?target=cam-1&from=yesterday', field: 'query.from' },
  ],
  'GET /fleet/history/last-seen': [{ path: '/fleet/history/last-seen', field: 'query.class' }],
  'GET /fleet/history/events': [
    { path: '/fleet/history/events', field: 'query.target' },
    { path: '/fleet/history/events?target=cam-1&kind=nope', field: 'query.kind' },
  ],
  'POST /fleet/provision-shadow': [
    { path: '/fleet/provision-shadow', init: { json: { device_id: 'cam-1' } }, field: 'body.host' },
    { path: '/fleet/provision-shadow', init: { json: { device_id: 'a/b', host: '127.0.0.1' } }, field: 'body.device_id' },
    { path: '/fleet/provision-shadow', init: { json: { device_id: 'cam-1', host: '127.0.0.1', root: 'rel' } }, field: 'body.root' },
    { path: '/fleet/provision-shadow', init: { json: { device_id: 'cam-1', host: '127.0.0.1', auth: { method: 'password' } } }, field: 'body.auth.password' },
  ],
  'GET /fleet/provision-shadow': [],
  'POST /svc-agent/resolve': [{ path: '/svc-agent/resolve', init: { json: ['request'] }, field: 'body' }],
  'GET /fleet/host-manifest': [],
  'GET /debug/log/tail': [
    { path: '/debug/log/tail?lines=0', field: 'query.lines' },
    { path: '/debug/log/tail?level=loud', field: 'query.level' },
  ],
  'GET /debug/shadow/:device/logs': [
    { path: '/debug/shadow/cam-1/logs?file=..%2Fetc', field: 'query.file' },
    { path: '/debug/shadow/cam-1/logs?follow=yes', field: 'query.follow' },
  ],
  'GET /debug/export': [{ path: '/debug/export?lines=0', field: 'query.lines' }],
  'POST /fleet/remediate': [
    { path: '/fleet/remediate', init: { json: { apply: 'yes' } }, field: 'body.apply' },
    { path: '/fleet/remediate', init: { json: { devices: ['a/b'] } }, field: 'body.devices.0' },
    { path: '/fleet/remediate', init: { json: { modules: ['storage'] } }, field: 'body.modules.0' },
  ],
  'POST /svc-agent/execute': [{ path: '/svc-agent/execute', init: { json: ['plan'] }, field: 'body' }],
  'GET /svc-agent/memory': [{ path: '/svc-agent/memory', field: 'query.agent' }],
  'PUT /svc-agent/memory': [{ path: '/svc-agent/memory', init: { method: 'PUT', json: ['note'] }, field: 'body' }],
  'DELETE /svc-agent/memory': [{ path: '/svc-agent/memory', init: { method: 'DELETE' }, field: 'query.agent' }],
  'GET /fleet/transfers': [
    { path: '/fleet/transfers?state=paused', field: 'query.state' },
    { path: '/fleet/transfers?limit=0', field: 'query.limit' },
  ],
  'POST /fleet/transfers': [
    { path: '/fleet/transfers', init: { json: { device: 'cam-1' } }, field: 'body.chunks' },
    { path: '/fleet/transfers', init: { json: { device: 'cam-1', chunks: [] } }, field: 'body.chunks' },
    { path: '/fleet/transfers', init: { json: { chunks: ['a.h265'] } }, field: 'body.device' },
    { path: '/fleet/transfers', init: { json: { kind: 'upload' } }, field: 'body.transfers' },
    { path: '/fleet/transfers', init: { json: { kind: 'upload', transfers: ['t-1'], chunks: ['a.h265'] } }, field: 'body.chunks' },
    { path: '/fleet/transfers', init: { json: { kind: 'fetch', device: 'cam-1', chunks: ['a.h265'] } }, field: 'body.kind' },
  ],
  // No query and no body: an unknown id answers 404 (test/integration/media/transfer-queue.test.ts).
  'GET /fleet/transfers/:id': [],
  'DELETE /fleet/transfers/:id': [],
  'POST /fleet/transfers/:id/retry': [],
  'POST /tools/call': [
    { path: '/tools/call', init: { json: { tool: 'get_system_health', arguments: {} } }, field: 'query.target' },
    { path: '/tools/call?target=cam-1', init: { json: { arguments: {} } }, field: 'body.tool' },
    { path: '/tools/call?target=cam-1', init: { json: { tool: 'get_system_health' } }, field: 'body.arguments' },
    { path: '/tools/call?target=cam-1', init: { json: { tool: 'get_system_health', arguments: [] } }, field: 'body.arguments' },
    { path: '/tools/call?target=cam-1', init: { json: ['tool'] }, field: 'body' },
  ],
};

/** GET routes that cannot answer 200 without input: a valid request for a device no hub knows (404). */
const REQUIRED_INPUT: Record<string, string> = {
  '/pull-recording': '?target=cam-404',
  '/fleet/ocr': '?target=cam-404',
  '/console/:file': '?',
  '/tools/list': '?target=cam-404',
  '/stream/live/mp4': '?target=cam-404',
  // An endless stream otherwise: with a device that does not exist it answers 404 at once.
  '/fleet/events': '?device=cam-404',
  '/fleet/history': '?device=cam-404',
  '/fleet/history/people': '?target=cam-404',
  '/fleet/history/last-seen': '?class=person&target=cam-404',
  '/fleet/history/events': '?target=cam-404',
  '/svc-agent/memory': '?agent=test-agent&device=fleet',
  '/api/*rest': '?',
  '/stream/snapshot': '?target=cam-404',
  '/media/clips/:device/:file': '?',
  '/camera/profile': '?target=cam-404',
  '/stream/live/info': '?target=cam-404',
  '/debug/shadow/:device/logs': '?',
  // No device holds a label in a hub that heard no hello: 404.
  '/fleet/registry/labels/:label': '?',
  // No transfer has the id `:id`: 404.
  '/fleet/transfers/:id': '?',
};

/** A valid body of each route that takes one (the rest take a tool call's): what is not a 400. */
const VALID_BODIES: Record<string, unknown> = {
  '/camera/profile': { fps: 5 },
  '/a2a/sign': { method: 'POST', path: '/a2a/query' },
  '/media/clips/sign': { device: 'cam-404', file: 'x.mp4' },
  '/mcp': { jsonrpc: '2.0', id: 1, method: 'ping' },
  '/fleet/provision-shadow': { device_id: 'cam-404', host: '127.0.0.1', port: 1, mqtt_url: 'mqtt://127.0.0.1:1883', hello_timeout_s: 1 },
  '/fleet/transfers': { device: 'cam-404', chunks: ['20240101T000000000Z_000001.h265'] },
  '/fleet/remediate': {},
  '/svc-agent/resolve': { tool: 'get_system_health', devices: ['cam-404'] },
  '/svc-agent/execute': { plan: { steps: [{ device: 'cam-404', tool: 'get_system_health', arguments: {} }] }, dry_run: true },
};

describe('hub routes: 400s and OpenAPI', () => {
  let hub: RunningHub;
  let bus: MemoryBus;
  before(async () => {
    bus = new MemoryBus();
    hub = await testHub({ bus });
  });
  after(async () => {
    await hub.close();
    await bus.close();
  });

  it('has a 400 case for every declared route', () => {
    const declared = hub.runtime.routes
      .list()
      .map((r) => `${r.decl.method} ${r.decl.path}`)
      .sort();
    assert.deepEqual(Object.keys(BAD_REQUESTS).sort(), declared);
  });

  for (const [route, cases] of Object.entries(BAD_REQUESTS)) {
    if (cases.length === 0) continue;
    it(`${route} answers a bad query or body 400, naming the field`, async () => {
      for (const c of cases) {
        const r = await api(hub.url, c.path, c.init ?? {});
        assert.equal(r.status, 400, `${c.path}: ${r.text}`);
        assert.equal(r.body.error.code, 'bad_request');
        assert.equal(r.body.error.details.field, c.field, `${c.path}: ${r.text}`);
        assert.ok(r.body.error.message.startsWith(c.field), r.body.error.message);
      }
    });
  }

  it('ignores query parameters a route does not declare (a browser’s cache buster), on every route', async () => {
    // Before: `?_=<time>` was a 400 on every route.
    for (const { decl } of hub.runtime.routes.list()) {
      const extra = '_=1718000000000&utm_source=mail';
      if (REQUIRED_INPUT[decl.path]) {
        // A route that needs input answers as it would without the extras: about its own parameters.
        const r = await api(hub.url, `${decl.path.replace(':device', 'cam-404').replace(':file', 'x.mp4')}${REQUIRED_INPUT[decl.path]}&${extra}`);
        assert.notEqual(r.status, 400, `${decl.path}: ${r.text}`);
      } else if (decl.method === 'GET') {
        const r = await api(hub.url, `${decl.path}?${extra}`);
        assert.equal(r.status, 200, `${decl.path}: ${r.text}`);
      } else {
        const json = VALID_BODIES[decl.path] ?? { tool: 'get_system_health', arguments: {} };
        // An unsigned /a2a/query answers 401 (not 400) once its own parameters are there.
        const query = decl.path === '/a2a/query' ? 'q=peer_hello&target=cam-404' : 'target=cam-404';
        const r = await api(hub.url, `${decl.path}?${query}&${extra}`, { method: decl.method, json });
        assert.notEqual(r.status, 400, `${decl.method} ${decl.path}: ${r.text}`);
      }
    }
    const r = await api(hub.url, '/debug/events?limit=16&_=1718000000000');
    assert.equal(r.status, 200, r.text);
  });

  it('documents what the server parses: integers as integers, kinds as an enum, and a license', async () => {
    const doc = (await api(hub.url, '/openapi.json')).body;
    assert.deepEqual(doc.info.license, { name: 'Apache-2.0', identifier: 'Apache-2.0' });
    const params = doc.paths['/debug/events'].get.parameters as { name: string; schema: Record<string, any>; style?: string; explode?: boolean }[];
    const limit = params.find((p) => p.name === 'limit')!;
    assert.equal(limit.schema.type, 'integer');
    assert.equal(limit.schema.minimum, 1);
    assert.equal(limit.schema.default, 100);
    const kind = params.find((p) => p.name === 'kind')!;
    assert.equal(kind.schema.type, 'array');
    assert.ok(kind.schema.items.enum.includes('recorder_status'), JSON.stringify(kind.schema));
    assert.ok(kind.schema.items.enum.includes('tool_error'));
    assert.equal(kind.style, 'form');
    assert.equal(kind.explode, false);
    const ok = await api(hub.url, '/debug/events?kind=tool_call,tool_error&limit=16');
    assert.equal(ok.status, 200, ok.text);
  });

  it('lists every route in /openapi.json (OpenAPI 3.1) with its parameters, body and error body', async () => {
    const doc = (await api(hub.url, '/openapi.json')).body;
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.components.schemas.ErrorBody);
    for (const { decl } of hub.runtime.routes.list()) {
      const op = doc.paths[decl.path.replace(/[:*](\w+)/g, '{$1}')]?.[decl.method.toLowerCase()];
      assert.ok(op, `${decl.method} ${decl.path} missing from OpenAPI`);
      assert.ok(op.responses['200'], `${decl.path} has no 200`);
      assert.ok(op.responses['400'], `${decl.path} has no 400`);
      const names = (op.parameters as { name: string; in: string }[])
        .filter((p) => p.in === 'query')
        .map((p) => p.name)
        .sort();
      // A route that takes signed URLs also documents their exp and sig.
      assert.deepEqual(names, [...Object.keys(decl.query?.shape ?? {}), ...(decl.signedUrl ? ['exp', 'sig'] : [])].sort(), decl.path);
    }
    const call = doc.paths['/tools/call'].post;
    assert.equal(call.parameters.find((p: { name: string }) => p.name === 'target').required, true);
    assert.deepEqual(call.requestBody.content['application/json'].schema.required.sort(), ['arguments', 'tool']);
    for (const s of ['404', '502', '504']) assert.ok(call.responses[s], `tools/call documents ${s}`);
    const latest = doc.paths['/fleet/mqtt/latest'].get.responses['200'].content['application/json'].schema;
    const entry = latest.properties.devices.additionalProperties;
    for (const field of ['status', 'payload', 'dets', 'recent_chunks', 'anomaly_alerts', 'stale_sec', 'age_s', 'stale'])
      assert.ok(entry.properties[field], field);
    const limit = doc.paths['/debug/events'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.equal(limit.required, false);
    assert.equal(limit.schema.maximum, 10000);
    assert.ok(doc.paths['/metrics'].get.responses['200'].content['text/plain; version=0.0.4']);
  });
});
