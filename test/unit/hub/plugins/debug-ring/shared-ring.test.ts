import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../../core/src/log/logger.js';
import { MemoryDebugRing } from '../../../../../hub/plugins/debug-ring/src/debug-ring.js';
import { sharedRing } from '../../../../../hub/plugins/debug-ring/src/shared-ring.js';
import { MemorySharedState } from '../../../../../hub/src/state/memory-shared-state.js';
import { RedisConnection } from '../../../../../hub/src/state/redis-connection.js';
import { RedisSharedState } from '../../../../../hub/src/state/redis-shared-state.js';
import { startRedis, type RedisServer } from '../../../../support/redis.js';

const logger = createLogger({ level: 'silent' });

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the debug ring of hub replicas (two rings, a real redis-server)', () => {
  let server: RedisServer;
  const connections: RedisConnection[] = [];
  const states: RedisSharedState[] = [];
  before(async () => {
    server = await startRedis({ persistence: false });
  });
  after(async () => {
    for (const s of states) s.close();
    for (const c of connections) await c.close();
    await server.stop();
  });

  const replica = async () => {
    const c = new RedisConnection({ url: server.url, prefix: 'ring-test:', logger });
    connections.push(c);
    await c.ready();
    const shared = new RedisSharedState(c);
    states.push(shared);
    const ring = new MemoryDebugRing(100);
    return { ring, service: sharedRing(ring, shared) };
  };

  it('a request one replica served is in both rings, with its time; what the ingest derives stays in each', async () => {
    const a = await replica();
    const b = await replica();
    let subscribers = 0;
    const count = async () => {
      const [, n] = (await connections[0].client.call('PUBSUB', 'NUMSUB', 'ring-test:broadcast:debug-ring')) as [string, number];
      subscribers = n;
    };
    for (const deadline = Date.now() + 5_000; subscribers < 2 && Date.now() < deadline;) {
      await count();
      if (subscribers < 2) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(subscribers, 2, 'both rings listen');
    a.service.record({ kind: 'tool_call', device_id: 'cam-1', message: 'get_status ok', details: { ms: 3 } });
    a.service.record({ kind: 'presence', device_id: 'cam-1', message: 'cam-1 is online' }, Date.now());
    await until('the tool call in the other ring', () => b.ring.query({ limit: 10 }).events.length > 0);
    const [inA] = a.ring.query({ limit: 10, kinds: ['tool_call'] }).events;
    const inB = b.ring.query({ limit: 10 }).events;
    assert.equal(inB.length, 1, 'only the request is shared');
    assert.deepEqual({ ...inB[0], seq: 0 }, { ...inA, seq: 0 }, 'the same event, at the same time');
    assert.equal(a.ring.query({ limit: 10, kinds: ['tool_call'] }).events.length, 1, 'not echoed back to the replica that recorded it');
  });

  it('one hub in memory: the ring is the plain ring', () => {
    const ring = new MemoryDebugRing(10);
    const service = sharedRing(ring, new MemorySharedState());
    service.record({ kind: 'tool_error', message: 'device_timeout' });
    assert.equal(ring.query({ limit: 10 }).events.length, 1);
  });
});
