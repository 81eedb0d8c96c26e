/**
 * Signed floods of POST /a2a/query (issue 25, item 6), on a hub in this process with a real sidecar
 * double over mTLS: signed queries for a target that does not exist take no place in the nonce
 * cache (the target is checked before the nonce is claimed), a signer over its nonce bound is
 * refused alone (429 a2a.signer_busy) while other signers go on, and /a2a/sign signs only the A2A
 * routes. The cache bounds are lowered in configuration so that a flood of a few hundred requests
 * stands for the 100 000 of the issue.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signA2a, type A2aHeaders } from '../../../../../lib/auth/a2a-signature.js';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import { BUSY_RETRY_AFTER_S } from '../../../../../hub/plugins/a2a/src/signed-request.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { MemorySharedState } from '../../../../../hub/src/state/memory-shared-state.js';
import { a2aTestHub, startTestSidecar, type TestSidecar } from '../../../../support/a2a-helpers.js';
import { api, msg, waitFor, type Answer } from '../../../../support/hub-helpers.js';
import { provisionTestFleetCerts } from '../../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

const KEY = 'a2a-flood-test-key-0123456789';
const TOKEN = 'a2a-flood-bearer-token-0123456789';
/** The hub's whole nonce cache, lowered from 100 000. */
const CACHE = 200;
/** One signer's bound, lowered from 10 000. */
const PER_SIGNER = 5;

const error = (r: Answer) => [r.status, r.body?.error?.code];

describe('a2a: signed floods', () => {
  let scratch: ScratchDir;
  let sidecar: TestSidecar;
  let bus: MemoryBus;
  let hub: RunningHub;

  before(async () => {
    scratch = await scratchDir('lookout-a2a-flood-');
    const hubDir = join(scratch.dir, 'hub');
    const fleet = await provisionTestFleetCerts(join(scratch.dir, 'ca'), {
      devices: [{ id: 'cam-1', dataRoot: join(scratch.dir, 'cam-1') }],
      hubDataDir: hubDir,
    });
    sidecar = await startTestSidecar({ deviceId: 'cam-1', ...fleet.device('cam-1') });
    bus = new MemoryBus();
    hub = await a2aTestHub({
      bus,
      dataDir: hubDir,
      sharedState: new MemorySharedState({ maxClaims: CACHE }),
      token: TOKEN,
      host: '127.0.0.1',
      env: { A2A_HMAC_KEY: KEY, A2A_NONCES_PER_SIGNER: String(PER_SIGNER) },
    });
    await bus.publish('devices/cam-1/hello', JSON.stringify({ ...msg.hello('cam-1', ['127.0.0.1'], 9), ports: { tools: 9, sidecar: sidecar.port } }));
    await waitFor('the hello of cam-1', async () => (await api(hub.url, '/fleet/registry', { token: TOKEN })).body.registry.devices.length === 1);
  });
  after(async () => {
    await hub?.close();
    await bus?.close();
    await sidecar?.close();
    await scratch?.cleanup();
  });

  /** A query signed here with the test's own key (as `keyId` when given), sent once. */
  const query = (target: string, keyId?: string, headers?: A2aHeaders): Promise<Answer> => {
    const q = { q: 'peer_hello', target };
    const signed = headers ?? signA2a(KEY, { method: 'POST', path: '/a2a/query', query: q, body: '' }, Date.now(), undefined, keyId);
    return api(hub.url, `/a2a/query?${new URLSearchParams(q).toString()}`, { method: 'POST', headers: signed });
  };

  it('signed queries for a target that does not exist, more than the whole cache holds, do not make a real query 503', async () => {
    // Each flooder its own key id, so that no signer bound stops the flood before the cache would fill.
    const outcomes = new Map<string, number>();
    for (let i = 0; i < CACHE + 50; i++) {
      const r = await query('cam-404', `flooder-${i}`);
      const code = String(r.body?.error?.code ?? r.status);
      outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
    }
    assert.deepEqual([...outcomes], [['target_unknown', CACHE + 50]], 'each refused as unknown, none as busy');
    const real = await query('cam-1', 'operator');
    assert.equal(real.status, 200, real.text);
    assert.equal(real.body.device_id, 'cam-1');
  });

  it('a signer over its nonce bound is refused (429 signer_busy, Retry-After) for itself only; other signers, the A2A key and /a2a/sign go on', async () => {
    for (let i = 0; i < PER_SIGNER; i++) assert.equal((await query('cam-1', 'noisy')).status, 200);
    const over = await query('cam-1', 'noisy');
    assert.deepEqual(error(over), [429, 'a2a.signer_busy'], over.text);
    assert.equal(over.headers.get('retry-after'), String(BUSY_RETRY_AFTER_S));
    assert.equal(over.body.error.details.signer, 'noisy');

    assert.equal((await query('cam-1', 'quiet')).status, 200, 'another key id');
    assert.equal((await query('cam-1')).status, 200, 'the A2A key itself');
    const s = await api(hub.url, '/a2a/sign', { json: { method: 'POST', path: '/a2a/query', query: { q: 'peer_hello', target: 'cam-1' } }, token: TOKEN });
    assert.equal(s.status, 200, s.text);
    assert.equal(s.body.headers['X-Lookout-Key-Id'], 'a2a-sign', '/a2a/sign signs as its own signer');
    const viaSign = await api(hub.url, `/a2a/query?${s.body.query_string}`, { method: 'POST', headers: s.body.headers, body: s.body.body });
    assert.equal(viaSign.status, 200, viaSign.text);
    assert.deepEqual(error(await query('cam-1', 'noisy')), [429, 'a2a.signer_busy'], 'still refused: its nonces live 600 s');
  });

  it('a key id names the key: a signature of the A2A key sent with a key id, or of one signer sent as another, is invalid', async () => {
    const q = { q: 'peer_hello', target: 'cam-1' };
    const asFleet = signA2a(KEY, { method: 'POST', path: '/a2a/query', query: q, body: '' });
    assert.deepEqual(error(await query('cam-1', undefined, { ...asFleet, 'X-Lookout-Key-Id': 'quiet' })), [401, 'a2a.signature_invalid']);
    const asQuiet = signA2a(KEY, { method: 'POST', path: '/a2a/query', query: q, body: '' }, Date.now(), undefined, 'quiet');
    assert.deepEqual(error(await query('cam-1', undefined, { ...asQuiet, 'X-Lookout-Key-Id': 'noisy' })), [401, 'a2a.signature_invalid']);
    assert.deepEqual(error(await query('cam-1', undefined, { ...asQuiet, 'X-Lookout-Key-Id': 'no spaces' })), [401, 'a2a.signature_malformed']);
  });

  it('/a2a/sign signs only the A2A routes: /tools/call, other paths and other methods are 400, naming the field', async () => {
    const refused: [Record<string, unknown>, string][] = [
      [{ method: 'POST', path: '/tools/call', body: { device_id: 'cam-1', name: 'reboot', arguments: {} } }, 'body.path'],
      [{ method: 'POST', path: '/a2a/sign' }, 'body.path'],
      [{ method: 'GET', path: '/fleet/registry' }, 'body.path'],
      [{ method: 'GET', path: '/a2a/query', query: { q: 'peer_hello', target: 'cam-1' } }, 'body.method'],
    ];
    for (const [json, field] of refused) {
      const r = await api(hub.url, '/a2a/sign', { json, token: TOKEN });
      assert.equal(r.status, 400, `${JSON.stringify(json)}: ${r.text}`);
      assert.equal(r.body.error.details?.field, field, r.text);
      assert.equal(r.body.headers, undefined, 'no signature given');
    }
    const lower = await api(hub.url, '/a2a/sign', { json: { method: 'post', path: '/a2a/query', query: { q: 'peer_hello', target: 'cam-1' } }, token: TOKEN });
    assert.equal(lower.status, 200, 'the method in any case');
  });
});
