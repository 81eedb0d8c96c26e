/**
 * POST /a2a/sign and POST /a2a/query on a hub in this process (memory bus), the target's sidecar a
 * test double at the edge (test/support/a2a-helpers.ts): bearer and signature, each refusal's
 * code, the hub's client certificate read when it appears, who is contacted and who is not.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { MemoryStateStore } from '../../../../../hub/src/state/memory-state-store.js';
import { a2aTestHub, startTestSidecar, type SidecarBehaviour, type TestSidecar } from '../../../../support/a2a-helpers.js';
import { api, msg, waitFor, type Answer } from '../../../../support/hub-helpers.js';
import { provisionTestFleetCerts, type TestFleetCerts } from '../../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

const KEY = 'a2a-routes-test-key-0123456789';
const TOKEN = 'a2a-routes-bearer-token-0123456789';

describe('the a2a routes', () => {
  let scratch: ScratchDir;
  let fleet: TestFleetCerts;
  let sidecar: TestSidecar;
  let behave: SidecarBehaviour | undefined;
  let bus: MemoryBus;
  let hub: RunningHub;
  const hubDir = () => join(scratch.dir, 'hub');

  before(async () => {
    scratch = await scratchDir('lookout-a2a-routes-');
    // The devices' certificates now, the hub's later: the hub starts without one.
    fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), { devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1') }] });
    sidecar = await startTestSidecar({ deviceId: 'cam-1', ...fleet.device('cam-1'), behave: (r) => behave?.(r) });
    bus = new MemoryBus();
    hub = await a2aTestHub({
      bus,
      dataDir: hubDir(),
      stateStore: new MemoryStateStore(),
      token: TOKEN,
      host: '127.0.0.1',
      env: { A2A_HMAC_KEY: KEY, A2A_PEER_TIMEOUT_MS: '3000' },
    });
    await bus.publish('devices/cam-1/hello', JSON.stringify({ ...msg.hello('cam-1', ['127.0.0.1'], 9), ports: { tools: 9, sidecar: sidecar.port } }));
    await bus.publish('devices/cam-2/hello', JSON.stringify(msg.hello('cam-2', ['127.0.0.1'], 9)));
    await bus.publish('devices/cam-far/hello', JSON.stringify({ ...msg.hello('cam-far', ['192.0.2.7'], 9), ports: { tools: 9, sidecar: 8777 } }));
    await waitFor('the hello of cam-1', async () => (await api(hub.url, '/fleet/registry', { token: TOKEN })).body.registry.devices.length === 3);
  });
  after(async () => {
    await hub?.close();
    await bus?.close();
    await sidecar?.close();
    await scratch?.cleanup();
  });

  const sign = (query: Record<string, string>, body?: unknown) =>
    api(hub.url, '/a2a/sign', { json: { method: 'POST', path: '/a2a/query', query, ...(body !== undefined ? { body } : {}) }, token: TOKEN });
  /** Signs through /a2a/sign, then sends exactly what was signed (with `alter` applied last). */
  const signedQuery = async (query: Record<string, string>, alter: { path?: string; headers?: Record<string, string> } = {}): Promise<Answer> => {
    const s = await sign(query);
    assert.equal(s.status, 200, s.text);
    return api(hub.url, alter.path ?? `/a2a/query?${s.body.query_string}`, {
      method: 'POST',
      headers: { ...s.body.headers, ...alter.headers },
      body: s.body.body,
    });
  };
  const error = (r: Answer) => [r.status, r.body?.error?.code];

  it('/a2a/sign is for bearer holders; /a2a/query takes no bearer but a signature', async () => {
    const noBearer = await api(hub.url, '/a2a/sign', { json: { method: 'POST', path: '/a2a/query' } });
    assert.deepEqual(error(noBearer), [401, 'unauthorized']);
    const unsigned = await api(hub.url, '/a2a/query?q=peer_hello&target=cam-1', { method: 'POST' });
    assert.deepEqual(error(unsigned), [401, 'a2a.signature_missing']);
    const withBearerOnly = await api(hub.url, '/a2a/query?q=peer_hello&target=cam-1', { method: 'POST', token: TOKEN });
    assert.deepEqual(error(withBearerOnly), [401, 'a2a.signature_missing'], 'the bearer token is no signature');
  });

  it('without the hub certificate: 503 no_client_certificate saying what to run; once provisioned, the peer’s ack (no restart)', async () => {
    const before = await signedQuery({ q: 'peer_hello', target: 'cam-1' });
    assert.deepEqual(error(before), [503, 'a2a.no_client_certificate'], before.text);
    assert.match(before.body.error.message, /tls\/hub\.crt is missing; provision the hub with lookout certs/);
    assert.equal(sidecar.connections, 0, 'the sidecar was not dialled without a certificate');

    await provisionTestFleetCerts(fleet.caDir, { hubDataDir: hubDir() });
    const r = await signedQuery({ q: 'peer_hello', target: 'cam-1' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.q, 'peer_hello');
    assert.equal(r.body.ack, true);
    assert.equal(r.body.device_id, 'cam-1');
    assert.equal(r.body.caller, 'lookout-hub', 'the sidecar saw the hub’s certificate');
    assert.equal(r.body.target, 'cam-1');
    assert.equal(r.body.sidecar, `127.0.0.1:${sidecar.port}`);
    assert.equal(typeof r.body.rtt_ms, 'number');
    assert.equal(r.body.tls_fingerprint, new X509Certificate(await readFile(fleet.device('cam-1').certPath)).fingerprint256, 'the certificate the hub saw');
  });

  it('each bad signature is its own 401, and a replay of a good request is refused', async () => {
    const s = await sign({ q: 'peer_hello', target: 'cam-1' });
    const send = (headers: Record<string, string>, path = `/a2a/query?${s.body.query_string}`) =>
      api(hub.url, path, { method: 'POST', headers, body: s.body.body });
    const h = s.body.headers as Record<string, string>;
    assert.deepEqual(error(await send({ ...h, 'X-Lookout-Timestamp': 'yesterday' })), [401, 'a2a.signature_malformed']);
    const old = String(Number(h['X-Lookout-Timestamp']) - 600);
    assert.deepEqual(error(await send({ ...h, 'X-Lookout-Timestamp': old })), [401, 'a2a.signature_stale']);
    assert.deepEqual(error(await send(h, '/a2a/query?q=peer_hello&target=cam-2')), [401, 'a2a.signature_invalid'], 'the target changed after signing');
    assert.deepEqual(error(await send(h)), [200, undefined]);
    assert.deepEqual(error(await send(h)), [401, 'a2a.signature_replayed']);
  });

  it('the signature covers every query parameter, undeclared ones too', async () => {
    const r = await signedQuery({ q: 'peer_hello', target: 'cam-1', trace: 'abc' });
    assert.equal(r.status, 200, r.text);
    const s = await sign({ q: 'peer_hello', target: 'cam-1' });
    const added = await api(hub.url, `/a2a/query?${s.body.query_string}&trace=abc`, { method: 'POST', headers: s.body.headers, body: s.body.body });
    assert.deepEqual(error(added), [401, 'a2a.signature_invalid']);
  });

  it('only registered devices with a sidecar are targets; nobody else is dialled', async () => {
    const dialled = sidecar.connections;
    assert.deepEqual(error(await signedQuery({ q: 'peer_hello', target: 'cam-404' })), [404, 'target_unknown']);
    assert.deepEqual(error(await signedQuery({ q: 'peer_hello', target: `127.0.0.9:${sidecar.port}` })), [404, 'target_unknown']);
    assert.deepEqual(error(await signedQuery({ q: 'peer_hello', target: 'cam-far' })), [403, 'target_not_allowed']);
    const noSidecar = await signedQuery({ q: 'peer_hello', target: 'cam-2' });
    assert.deepEqual(error(noSidecar), [502, 'a2a.no_sidecar']);
    assert.match(noSidecar.body.error.message, /cam-2 announced no peer sidecar port/);
    assert.equal(sidecar.connections, dialled);
  });

  it('/a2a/sign refuses what cannot be signed with a 400 naming the field: a lone surrogate, a body nested too deep', async () => {
    const surrogate = await api(hub.url, '/a2a/sign', { json: { method: 'POST', path: '/a2a/query', query: { q: '\ud800' } }, token: TOKEN });
    assert.deepEqual([surrogate.status, surrogate.body.error.code, surrogate.body.error.details.field], [400, 'bad_request', 'body.query.q'], surrogate.text);
    assert.match(surrogate.body.error.message, /lone surrogate/);
    const inBody = await api(hub.url, '/a2a/sign', { json: { method: 'POST', path: '/a2a/query', body: { note: 'x\udc00' } }, token: TOKEN });
    assert.deepEqual([inBody.status, inBody.body.error.details.field], [400, 'body.body.note'], inBody.text);
    const deep = await api(hub.url, '/a2a/sign', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"method":"POST","path":"/a2a/query","body":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      token: TOKEN,
    });
    assert.equal(deep.status, 400, deep.text);
    assert.match(deep.body.error.message, /nested deeper than 64 levels/);
  });

  it('an unknown q is a 400 naming query.q (before the signature is looked at)', async () => {
    const r = await api(hub.url, '/a2a/query?q=peer_goodbye&target=cam-1', { method: 'POST' });
    assert.deepEqual([r.status, r.body.error.details.field], [400, 'query.q']);
  });

  it('a client that goes away cancels the forwarded query; the debug ring records the queries', async () => {
    behave = () => 'hang';
    const s = await sign({ q: 'peer_hello', target: 'cam-1' });
    const aborter = new AbortController();
    const pending = fetch(`${hub.url}/a2a/query?${s.body.query_string}`, {
      method: 'POST',
      headers: s.body.headers,
      body: s.body.body,
      signal: aborter.signal,
    });
    await waitFor('the query to reach the sidecar', () => sidecar.connections > 0 && true);
    setTimeout(() => aborter.abort(), 100);
    await assert.rejects(pending);
    const events = async () => (await api(hub.url, '/debug/events?device=cam-1&limit=50', { token: TOKEN })).body.events as { kind: string; message: string }[];
    await waitFor('the cancelled query in the ring', async () => (await events()).some((e) => e.kind === 'a2a' && /cancelled/.test(e.message)), 2500);
    assert.ok((await events()).some((e) => e.kind === 'a2a' && /^peer_hello ok/.test(e.message)));
    behave = undefined;
  });

  it('declares its codes with their statuses in the OpenAPI', async () => {
    const doc = (await api(hub.url, '/openapi.json', { token: TOKEN })).body;
    const codes = new Map((doc.components.schemas.ErrorCode['x-error-codes'] as { code: string; status: number }[]).map((e) => [e.code, e.status]));
    for (const c of ['signature_missing', 'signature_malformed', 'signature_stale', 'signature_replayed', 'signature_invalid'])
      assert.equal(codes.get(`a2a.${c}`), 401, c);
    assert.equal(codes.get('a2a.no_client_certificate'), 503);
    assert.equal(codes.get('a2a.busy'), 503, 'a nonce the hub cannot record');
    assert.equal(codes.get('a2a.peer_unreachable'), 502);
    assert.equal(doc.paths['/a2a/query'].post.security?.length ?? 0, 0);
  });
});
