import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../core/src/log/logger.js';
import { RedisConnection } from '../../../../hub/src/state/redis-connection.js';
import { RedisSharedState, SHARED_RECORD_MAX_BYTES } from '../../../../hub/src/state/redis-shared-state.js';
import { RedisStateStore } from '../../../../hub/src/state/redis-state-store.js';
import { streamIdBefore } from '../../../../hub/src/state/stream-point.js';
import { waitFor } from '../../../support/wait-for.js';
import { startRedis, type RedisServer } from '../../../support/redis.js';
import { freePort } from '../../../support/free-port.js';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { startHub } from '../../../../hub/src/start-hub.js';

const logger = createLogger({ level: 'silent' });
const asObject = (raw: unknown) => {
  if (typeof raw !== 'object' || raw === null) throw new Error('not an object');
  return raw as Record<string, unknown>;
};

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('Redis hub state (a real redis-server)', () => {
  let server: RedisServer;
  const connections: RedisConnection[] = [];
  const connect = async (prefix = 'test:'): Promise<RedisConnection> => {
    const c = new RedisConnection({ url: server.url, prefix, logger, maxBackoffMs: 100 });
    connections.push(c);
    await c.ready();
    return c;
  };

  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    for (const c of connections) await c.close();
    await server.stop();
  });

  it('claimOnce with a holder: its bound is shared by the replicas, holder_full for it alone, freed as its claims expire', async () => {
    const a = new RedisSharedState(await connect('held:'));
    const b = new RedisSharedState(await connect('held:'));
    const noisy = { id: 'noisy', max: 3 };
    assert.equal(await a.claimOnce('nonce', 'n-1', 300, noisy), 'claimed');
    assert.equal(await b.claimOnce('nonce', 'n-2', 300, noisy), 'claimed', 'the other replica counts against the same bound');
    assert.equal(await a.claimOnce('nonce', 'n-3', 60_000, noisy), 'claimed');
    assert.equal(await b.claimOnce('nonce', 'n-4', 60_000, noisy), 'holder_full');
    assert.equal(await a.claimOnce('nonce', 'n-1', 60_000, noisy), 'already_claimed', 'a live claim is a replay, full or not');
    assert.equal(await b.claimOnce('nonce', 'q-1', 60_000, { id: 'quiet', max: 3 }), 'claimed', 'another holder goes on');
    assert.equal(await b.claimOnce('nonce', 'x-1', 60_000), 'claimed', 'a claim without a holder goes on');
    assert.equal(await b.claimOnce('nonce', 'n-4', 60_000), 'claimed', 'refused as holder_full, the key was not claimed');
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(await a.claimOnce('nonce', 'n-5', 60_000, noisy), 'claimed', 'expired claims leave the holder’s set');
    assert.equal(await b.claimOnce('nonce', 'n-6', 60_000, noisy), 'claimed');
    assert.equal(await a.claimOnce('nonce', 'n-7', 60_000, noisy), 'holder_full', 'n-3, n-5, n-6 live');
    const conn = connections.at(-1)!;
    const ttl = await conn.client.pttl(conn.key('claim-holder', 'nonce', 'noisy'));
    assert.ok(ttl > 0 && ttl <= 60_000, `the holder’s set expires with its newest claim (pttl ${ttl})`);
  });

  it('claimOnce succeeds once fleet-wide while the claim lives, then again after its ttl', async () => {
    const a = new RedisSharedState(await connect());
    const b = new RedisSharedState(await connect());
    assert.equal(await a.claimOnce('nonce', 'n-1', 150), 'claimed');
    assert.equal(await b.claimOnce('nonce', 'n-1', 150), 'already_claimed', 'the other replica sees the claim');
    assert.equal(await a.claimOnce('nonce', 'n-1', 150), 'already_claimed');
    assert.equal(await b.claimOnce('other-scope', 'n-1', 150), 'claimed', 'scopes are apart');
    await new Promise((r) => setTimeout(r, 220));
    assert.equal(await b.claimOnce('nonce', 'n-1', 150), 'claimed', 'an expired claim may be made again');
  });

  it('records by scope are seen by every replica, copied through JSON, and bounded', async () => {
    const a = new RedisSharedState(await connect());
    const b = new RedisSharedState(await connect());
    const grade = { grade: 'ready', checks: [1, 2] };
    await a.put('grades', 'cam-1', grade);
    grade.grade = 'changed after put';
    assert.deepEqual(await b.get('grades', 'cam-1'), { grade: 'ready', checks: [1, 2] });
    await b.put('grades', 'cam-2', { grade: 'degraded' });
    assert.deepEqual(
      [...(await a.entries('grades'))].sort(([x], [y]) => x.localeCompare(y)),
      [
        ['cam-1', { grade: 'ready', checks: [1, 2] }],
        ['cam-2', { grade: 'degraded' }],
      ],
    );
    await a.delete('grades', 'cam-1');
    assert.equal(await b.get('grades', 'cam-1'), undefined);
    await assert.rejects(a.put('grades', 'big', 'x'.repeat(SHARED_RECORD_MAX_BYTES + 1)), (err: Error & { code?: string }) => err.code === 'argument_invalid');
  });

  it('with Redis down: claims fail closed, reads answer from the local copy, writes are refused; all well again when it returns', async () => {
    const conn = await connect();
    const shared = new RedisSharedState(conn);
    await shared.put('presence', 'cam-9', { online: true });
    assert.deepEqual(await shared.get('presence', 'cam-9'), { online: true });
    await server.pause();
    await until('the connection to notice', () => !conn.up);
    assert.equal(await shared.claimOnce('nonce', 'while-down', 60_000), 'unavailable', 'fails closed, and says it could not look (not "claimed before")');
    assert.deepEqual(await shared.get('presence', 'cam-9'), { online: true }, 'the local copy');
    assert.deepEqual([...(await shared.entries('presence'))], [['cam-9', { online: true }]]);
    await assert.rejects(shared.put('presence', 'cam-9', { online: false }), (err: Error & { code?: string }) => err.code === 'service_unavailable');
    await server.start();
    await until('the reconnect', () => conn.up, 10_000);
    assert.equal(await shared.claimOnce('nonce', 'while-down', 60_000), 'claimed', 'nothing was claimed while it was down');
    assert.deepEqual(await shared.get('presence', 'cam-9'), { online: true }, 'what Redis held survived its restart (append-only file)');
  });

  it('a hub whose --state Redis cannot be reached does not start, and says which flag', async () => {
    const closed = await freePort();
    await assert.rejects(
      startHub({
        bus: new MemoryBus(),
        port: 0,
        stateUrl: `redis://:secret-pw@127.0.0.1:${closed}`,
        dataDir: '/tmp/lookout-hub-tests-nonexistent',
        fleetSecret: 'lookout-test-fleet-secret-7d1c',
        defaultMetrics: false,
        logger,
      }),
      (err: Error & { code?: string }) =>
        err.code === 'config_invalid' && /^--state: redis redis:\/\/127\.0\.0\.1:\d+ not reachable/.test(err.message) && !err.message.includes('secret-pw'),
    );
  });

  it('a hub with --state keeps its shared state in Redis: /fleet/mqtt/config says so', async () => {
    const bus = new MemoryBus();
    const hub = await startHub({
      bus,
      port: 0,
      stateUrl: server.url,
      statePrefix: 'hub-test:',
      dataDir: '/tmp/lookout-hub-tests-nonexistent',
      fleetSecret: 'lookout-test-fleet-secret-7d1c',
      defaultMetrics: false,
      logger,
    });
    try {
      const config = (await (await fetch(`${hub.url}/fleet/mqtt/config`)).json()) as { state: Record<string, unknown> };
      assert.deepEqual(config.state, { backend: 'redis', replica: false, stale: false, stale_since: null });
    } finally {
      await hub.close();
      await bus.close();
    }
  });

  it('RedisStateStore: keeps a key saved once per interval, loads it in another replica, sets a corrupt value aside', async () => {
    const conn = await connect('store:');
    const store = new RedisStateStore(conn, { logger, intervalMs: 50 });
    let n = 0;
    let snapshots = 0;
    let moved = (): void => assert.fail('the keeper never asked to be told');
    store.trackCursor('bus-cache', {
      member: 'a',
      point: () => ({ cursor: `${n}-0`, applied: `{"w":[[1,${n}]]}` }),
      resume: () => assert.fail('loaded only by the other replica'),
      replayable: () => Promise.resolve(true),
      onMoved: (changed) => (moved = changed),
    });
    const keeper = store.keep('bus-cache', () => {
      snapshots++;
      return { n };
    });
    for (n = 1; n <= 10; n++) keeper.changed();
    n = 10;
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(snapshots, 1, 'ten changes, one write');
    moved();
    // The point moved (a record read, no value changed): saved again.
    await waitFor(() => snapshots === 2, 'a second write');
    const other = new RedisStateStore(await connect('store:'), { logger });
    const resumed: unknown[] = [];
    const tracked = (member: string) => ({
      member,
      point: () => ({ cursor: '0-0', applied: '{}' }),
      resume: (point: unknown) => resumed.push(point),
      replayable: () => Promise.resolve(true),
      onMoved: () => undefined,
    });
    other.trackCursor('bus-cache', tracked('b'));
    const loaded = await other.load('bus-cache', asObject);
    assert.deepEqual(loaded.value, { n: 10 });
    assert.ok(loaded.savedAt !== undefined && Date.now() - loaded.savedAt < 5_000);
    assert.deepEqual([...resumed], [{ cursor: '10-0', applied: '{"w":[[1,10]]}' }], 'the point is saved, and read, with the value it goes with');
    other.trackCursor('never-saved', tracked('b'));
    assert.deepEqual(await other.load('never-saved', asObject), {});
    assert.equal(resumed.length, 1, 'nothing saved: no point, the stream is read from its start');

    await conn.client.set('store:state:broken', '{"format":"lookout-hub-state/1","key":"broken","value":');
    const refused = await other.load('broken', asObject);
    assert.equal(refused.value, undefined);
    assert.match(refused.warning ?? '', /not restored: .*set aside as store:state:broken:corrupt-/);
    assert.equal(await conn.client.exists('store:state:broken'), 0);
    const shapeRefused = await other.load('bus-cache', () => {
      throw new Error('wrong shape');
    });
    assert.match(shapeRefused.warning ?? '', /wrong shape/);
    assert.equal(resumed.length, 1, 'a cache set aside brings no point: it starts empty, from the stream’s start');
    assert.equal(await conn.client.exists('store:state-replica:bus-cache:a'), 0, 'set aside');
    await store.close();
    await other.close();
  });

  it('RedisStateStore: a replica resumes from its own save while the stream holds every entry after it, else from the newest; saves of no use are removed', async () => {
    const conn = await connect('own:');
    const save = async (member: string, cursor: string, value: string, members = `["${member}"]`) => {
      const store = new RedisStateStore(await connect('own:'), { logger });
      store.trackCursor('bus-cache', {
        member,
        point: () => ({ cursor, applied: '{}', ...(members ? { members } : {}) }),
        resume: () => undefined,
        replayable: () => Promise.resolve(true),
        onMoved: () => undefined,
      });
      store.keep('bus-cache', () => ({ value })).changed();
      await store.close();
    };
    await save('a', '100-0', 'a at 100');
    await save('b', '300-5', 'b at 300');
    await save('gone', '50-0', 'departed long ago');
    /** What `member` loads when the stream trimmed what came after a point older than `oldest`: the value and the point it resumes from. */
    const load = async (member: string, oldest: string) => {
      const store = new RedisStateStore(await connect('own:'), { logger });
      let point: unknown;
      store.trackCursor('bus-cache', {
        member,
        point: () => ({ cursor: '0-0', applied: '{}' }),
        resume: (p) => (point = p),
        replayable: (at) => Promise.resolve(!streamIdBefore(at, oldest)),
        onMoved: () => undefined,
      });
      const loaded = await store.load('bus-cache', asObject);
      await store.close();
      return { value: loaded.value, point };
    };
    assert.deepEqual(
      await load('a', '90-0'),
      {
        value: { value: 'a at 100' },
        point: { cursor: '100-0', applied: '{}', members: '["a"]' },
      },
      'its own: the stream holds what came after it (its downtime is read again)',
    );
    assert.equal(
      await conn.client.hget('own:state-points:bus-cache', 'gone'),
      null,
      'a save older than the stream’s oldest entry, of another replica: removed',
    );
    assert.equal(await conn.client.exists('own:state-replica:bus-cache:gone'), 0);
    assert.deepEqual((await load('a', '200-0')).value, { value: 'b at 300' }, 'its own is older than the stream’s oldest entry: the newest');
    assert.deepEqual((await load('c', '90-0')).value, { value: 'b at 300' }, 'a newcomer: the newest');
    await save('d', '60-0', 'd, old');
    assert.deepEqual((await load('c', '1-0')).value, { value: 'b at 300' }, 'every save can be read again from: a newcomer takes the newest');
    assert.ok(await conn.client.hget('own:state-points:bus-cache', 'd'), 'nothing removed while every save can be read again from');
    assert.ok(await conn.client.hget('own:state-points:bus-cache', 'a'), 'its own save stays (written over at its next)');
    await save('a', '110-0', 'a at 110', '');
    assert.deepEqual(
      (await load('a', '90-0')).point,
      { cursor: '110-0', applied: '{}' },
      'a save replaces the whole of the one before: no members left from an earlier run',
    );
    await conn.client.hdel('own:state-replica:bus-cache:b', 'value');
    assert.deepEqual((await load('c', '90-0')).value, { value: 'a at 110' }, 'a save without its value is passed over (and its point removed)');
    assert.equal(await conn.client.hget('own:state-points:bus-cache', 'b'), null);
    // Saved by an earlier version: one key shared by every replica, beside the stream id.
    await conn.client.del('own:state-points:bus-cache');
    await conn.client.set(
      'own:state:bus-cache',
      JSON.stringify({ format: 'lookout-hub-state/1', key: 'bus-cache', saved_at: new Date().toISOString(), value: { value: 'shared' } }),
    );
    await conn.client.set('own:state-cursor:bus-cache', '7-0');
    assert.deepEqual(await load('a', '1-0'), { value: { value: 'shared' }, point: { cursor: '7-0' } }, 'the shared key an earlier version saved');
  });

  it('RedisStateStore: a write while Redis is down is retried at the next change, the previous value staying', async () => {
    const conn = await connect('retry:');
    const store = new RedisStateStore(conn, { logger, intervalMs: 30 });
    let n = 1;
    const keeper = store.keep('ring', () => ({ n }));
    keeper.changed();
    await keeper.flush();
    await server.pause();
    await until('the connection to notice', () => !conn.up);
    n = 2;
    keeper.changed();
    await keeper.flush().catch(() => undefined);
    await server.start();
    await until('the reconnect', () => conn.up, 10_000);
    assert.deepEqual((await store.load('ring', asObject)).value, { n: 1 }, 'the failed write left the previous value');
    n = 3;
    keeper.changed();
    await keeper.flush();
    assert.deepEqual((await store.load('ring', asObject)).value, { n: 3 });
    await store.close();
  });
});
