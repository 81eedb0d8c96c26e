/**
 * POST /a2a/query when the hub cannot record a nonce: its in-process nonce cache full, or its
 * shared state in a real redis-server that is stopped. Either is a 503 `a2a.busy` with
 * Retry-After, never a 401 `signature_replayed` (the nonce was never seen) nor an admitted request
 * (one let through unclaimed could be replayed); a nonce seen before is still the 401.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import { createLogger } from '../../../../../core/src/log/logger.js';
import { BUSY_RETRY_AFTER_S } from '../../../../../hub/plugins/a2a/src/signed-request.js';
import type { HubSharedState } from '../../../../../hub/src/services/hub-services.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { MemorySharedState } from '../../../../../hub/src/state/memory-shared-state.js';
import { RedisConnection } from '../../../../../hub/src/state/redis-connection.js';
import { RedisSharedState } from '../../../../../hub/src/state/redis-shared-state.js';
import { a2aTestHub } from '../../../../support/a2a-helpers.js';
import { api, msg, waitFor, type Answer } from '../../../../support/hub-helpers.js';
import { startRedis, type RedisServer } from '../../../../support/redis.js';
import { provisionTestFleetCerts } from '../../../../support/fleet-certs.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

const KEY = 'a2a-busy-test-key-0123456789';
const TOKEN = 'a2a-busy-bearer-token-0123456789';
// cam-1 is registered with a sidecar port where nothing listens: an admitted query (its nonce
// claimed) ends at 502 peer_unreachable. A query for an unknown target is refused before the claim.
const QUERY = { q: 'peer_hello', target: 'cam-1' };
const ADMITTED = [502, 'a2a.peer_unreachable'];

let scratch: ScratchDir;
before(async () => {
  scratch = await scratchDir('lookout-a2a-busy-');
});
after(async () => scratch?.cleanup());

/** A port of 127.0.0.1 nobody listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Signed {
  path: string;
  headers: Record<string, string>;
  body: string;
}

async function busyHub(sharedState: HubSharedState): Promise<{ hub: RunningHub; bus: MemoryBus }> {
  const bus = new MemoryBus();
  const dataDir = join(scratch.dir, `hub-${Math.random().toString(36).slice(2)}`);
  await provisionTestFleetCerts(join(scratch.dir, 'ca'), { hubDataDir: dataDir });
  const hub = await a2aTestHub({ bus, dataDir, sharedState, token: TOKEN, host: '127.0.0.1', env: { A2A_HMAC_KEY: KEY, A2A_PEER_TIMEOUT_MS: '3000' } });
  await bus.publish('devices/cam-1/hello', JSON.stringify({ ...msg.hello('cam-1', ['127.0.0.1'], 9), ports: { tools: 9, sidecar: await closedPort() } }));
  await waitFor('the hello of cam-1', async () => (await api(hub.url, '/fleet/registry', { token: TOKEN })).body.registry.devices.length === 1);
  return { hub, bus };
}

async function sign(hub: RunningHub): Promise<Signed> {
  const s = await api(hub.url, '/a2a/sign', { json: { method: 'POST', path: '/a2a/query', query: QUERY }, token: TOKEN });
  assert.equal(s.status, 200, s.text);
  return { path: `/a2a/query?${s.body.query_string}`, headers: s.body.headers, body: s.body.body };
}

const send = (hub: RunningHub, s: Signed): Promise<Answer> => api(hub.url, s.path, { method: 'POST', headers: s.headers, body: s.body });
const error = (r: Answer) => [r.status, r.body?.error?.code];

function assertBusy(r: Answer, reason: string): void {
  assert.deepEqual(error(r), [503, 'a2a.busy'], r.text);
  assert.equal(r.headers.get('retry-after'), String(BUSY_RETRY_AFTER_S));
  assert.deepEqual(r.body.error.details, { reason, retry_after_s: BUSY_RETRY_AFTER_S });
  assert.match(r.body.error.message, /cannot record this nonce: retry in \d+ s with a new signature/);
}

describe('a2a: a nonce the hub cannot record', () => {
  describe('the in-process nonce cache full', () => {
    let hub: RunningHub;
    let bus: MemoryBus;
    before(async () => {
      ({ hub, bus } = await busyHub(new MemorySharedState({ maxClaims: 1 })));
    });
    after(async () => {
      await hub?.close();
      await bus?.close();
    });

    it('a new nonce is 503 a2a.busy with Retry-After; the nonce that filled it is still a replay (401)', async () => {
      const first = await sign(hub);
      assert.deepEqual(error(await send(hub, first)), ADMITTED, 'admitted: its nonce took the one place');
      assertBusy(await send(hub, await sign(hub)), 'nonce_cache_full');
      assert.deepEqual(error(await send(hub, first)), [401, 'a2a.signature_replayed'], 'a nonce seen before is a replay, full or not');
    });

    it('a bad signature is still its own 401 while the cache is full (checked before the nonce)', async () => {
      const s = await sign(hub);
      assert.deepEqual(error(await send(hub, { ...s, headers: { ...s.headers, 'X-Lookout-Signature': `v1=${'0'.repeat(64)}` } })), [
        401,
        'a2a.signature_invalid',
      ]);
    });
  });

  describe('the shared state in Redis, stopped (a real redis-server)', () => {
    let server: RedisServer;
    let conn: RedisConnection;
    let shared: RedisSharedState;
    let hub: RunningHub;
    let bus: MemoryBus;
    before(async () => {
      server = await startRedis();
      conn = new RedisConnection({ url: server.url, prefix: 'a2a-busy:', logger: createLogger({ level: 'silent' }), maxBackoffMs: 100 });
      await conn.ready();
      shared = new RedisSharedState(conn);
      ({ hub, bus } = await busyHub(shared));
    });
    after(async () => {
      await hub?.close();
      await bus?.close();
      shared?.close();
      await conn?.close();
      await server?.stop();
    });

    it('503 a2a.busy while Redis is away, neither a replay nor admitted; admitted again, and replays refused, once it is back', async () => {
      const seen = await sign(hub);
      assert.deepEqual(error(await send(hub, seen)), ADMITTED);
      assert.deepEqual(error(await send(hub, seen)), [401, 'a2a.signature_replayed']);

      await server.pause();
      await waitFor('the hub to notice Redis is away', () => !conn.up, 5_000);
      const whileDown = await sign(hub);
      assertBusy(await send(hub, whileDown), 'shared_state_unavailable');
      assertBusy(await send(hub, seen), 'shared_state_unavailable');

      await server.start();
      await waitFor('the reconnect', () => conn.up, 10_000);
      assert.deepEqual(error(await send(hub, whileDown)), ADMITTED, 'the refused nonce was never claimed: it is good once');
      assert.deepEqual(error(await send(hub, whileDown)), [401, 'a2a.signature_replayed']);
    });
  });
});
