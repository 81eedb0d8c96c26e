/**
 * StreamLag on a real redis-server: how far behind the shared ingest stream's end a replica reads,
 * in the stream's own time (entry ids written here with chosen times), sampled every few ms.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../core/src/log/logger.js';
import { RedisConnection } from '../../../hub/src/state/redis-connection.js';
import { StreamLag } from '../../../hub/src/state/stream-lag.js';
import { waitFor } from '../../support/hub-helpers.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

describe('StreamLag on redis-server', () => {
  let server: RedisServer;
  let redis: RedisConnection;
  const key = 'lag-test:ingest';

  before(async () => {
    server = await startRedis();
    redis = new RedisConnection({ url: server.url, prefix: 'lag-test:', logger: createLogger({ level: 'silent' }), maxBackoffMs: 100 });
    await redis.ready();
  });

  after(async () => {
    await redis.close();
    await server.stop();
  });

  /** The lag a sampler reports for `cursor`, once it has sampled (a few ms). */
  const lagAt = async (cursor: string): Promise<number | null> => {
    const lag = new StreamLag(redis, key, () => cursor, 10);
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      return lag.ms;
    } finally {
      lag.close();
    }
  };

  it('the newest entry less the oldest unread one; 0 once everything is read, or with nothing written', async () => {
    assert.equal(await lagAt('0-0'), 0, 'no stream yet: nothing to read');
    for (const id of ['1000-0', '3000-0', '3000-1', '7000-0']) await redis.client.xadd(key, id, 'b', 'x');
    assert.equal(await lagAt('0-0'), 6000, 'nothing read: the whole stream');
    assert.equal(await lagAt('1000-0'), 4000);
    assert.equal(await lagAt('3000-0'), 4000, 'an entry of the same millisecond still unread');
    assert.equal(await lagAt('3000-1'), 0, 'only the newest unread: within one entry of the end');
    assert.equal(await lagAt('7000-0'), 0);
  });

  it('follows the cursor as it moves, and says null while Redis is away', async () => {
    let cursor = '1000-0';
    const lag = new StreamLag(redis, key, () => cursor, 10);
    try {
      await waitFor('a first sample', () => Promise.resolve(lag.ms === 4000));
      cursor = '7000-0';
      await waitFor('the lag gone once the reader is at the end', () => Promise.resolve(lag.ms === 0));
      await server.pause();
      await waitFor('no figure while Redis is away', () => Promise.resolve(lag.ms === null));
      await server.start();
      await redis.ready();
      cursor = '3000-0';
      await waitFor('sampled again once Redis is back', () => Promise.resolve(lag.ms === 4000));
    } finally {
      lag.close();
    }
  });
});
