import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { createLogger } from '../../../core/src/log/logger.js';
import { IngestRelay } from '../../../hub/src/state/ingest-relay.js';
import { RedisConnection } from '../../../hub/src/state/redis-connection.js';
import { endClient, mqttClient, publish, sleep, waitFor } from '../../support/hub-helpers.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { startRedis, type RedisServer } from '../../support/redis.js';

const logger = createLogger({ level: 'silent' });

interface Replica {
  relay: IngestRelay;
  redis: RedisConnection;
}

/**
 * Who divides the apply (`--mirror-interval-ms`) changes where the ingest stream says so: each relay
 * writes its own join and leave; another's, when its heartbeat says so. Relays in this process on a
 * real mosquitto and redis-server.
 */
describe('ingest relay: the replicas dividing the apply, as the stream says', () => {
  let broker: Mosquitto;
  let server: RedisServer;
  before(async () => {
    [broker, server] = await Promise.all([startMosquitto(), startRedis()]);
  });
  after(async () => {
    await Promise.all([broker.stop(), server.stop()]);
  });

  const running = new Set<Replica>();
  afterEach(async () => stop([...running]));

  async function replica(prefix: string, name: string, retentionMs?: number): Promise<Replica> {
    const redis = new RedisConnection({ url: server.url, prefix, logger, maxBackoffMs: 100 });
    await redis.ready();
    const relay = new IngestRelay({
      redis,
      mqttUrl: broker.url,
      clientId: `${prefix}${name}`,
      group: prefix.replace(/\W/g, ''),
      logger,
      mirrorIntervalMs: 60_000,
      ...(retentionMs ? { retentionMs } : {}),
    });
    const r = { relay, redis };
    running.add(r);
    await relay.subscribe('devices/+/dets', () => undefined);
    relay.startReading();
    return r;
  }

  async function stop(replicas: Replica[]): Promise<void> {
    for (const r of replicas) {
      running.delete(r);
      await r.relay.close();
      await r.redis.close();
    }
  }

  /** The membership changes in the stream, in order. */
  async function changes(redis: RedisConnection): Promise<string[]> {
    const out: string[] = [];
    for (const [, fields] of await redis.client.xrange(redis.key('ingest'), '-', '+')) {
      const m = fields.indexOf('m');
      if (m >= 0 && m % 2 === 0) out.push(fields[m + 1]);
    }
    return out;
  }

  const members = (r: Replica) => r.relay.status().mirror?.replicas;

  it('each replica writes its join as it starts and its leave as it stops, and the others change owners there; no join is written for it again', async () => {
    const a = await replica('m1:', 'a');
    const b = await replica('m1:', 'b');
    await waitFor('both to count two members', () => members(a) === 2 && members(b) === 2);
    assert.deepEqual((await changes(a.redis)).slice(0, 2).sort(), ['{"join":"m1:a-0"}', '{"join":"m1:b-0"}']);
    await stop([b]);
    assert.equal((await changes(a.redis)).at(-1), '{"leave":"m1:b-0"}', 'its leave, written as it stopped');
    await waitFor('the other to count one member', () => members(a) === 1);
    // Rounds of heartbeats: the one that stayed writes nothing more of it.
    await sleep(3_000);
    assert.equal((await changes(a.redis)).at(-1), '{"leave":"m1:b-0"}');
    assert.equal(members(a), 1);
  });

  it('another replica writes the join of one that is alive without its own, and the leave of a member whose heartbeat is gone (a crash)', async () => {
    const a = await replica('m2:', 'a');
    await waitFor('one member', () => members(a) === 1);
    // A member that crashed: its join in the stream, no heartbeat.
    await a.redis.client.xadd(a.redis.key('ingest'), '*', 'm', '{"join":"m2:crashed-0"}');
    await waitFor('the crashed one counted', () => members(a) === 2);
    await waitFor(
      'its leave written by the live one, after two rounds without its heartbeat',
      async () => (await changes(a.redis)).includes('{"leave":"m2:crashed-0"}'),
      8_000,
    );
    await waitFor('one member again', () => members(a) === 1);
    // A replica alive (its heartbeat, as SessionAdoption writes it) whose own join never landed.
    await a.redis.client.set(a.redis.key('replica', 'm2:quiet-0'), 'x', 'PX', 20_000);
    await a.redis.client.sadd(a.redis.key('replicas'), 'm2:quiet-0');
    await waitFor('its join written by the live one', async () => (await changes(a.redis)).includes('{"join":"m2:quiet-0"}'), 8_000);
    await waitFor('two members', () => members(a) === 2);
  });

  /** A member with its join in the stream, its heartbeat (`ttlMs`) and its lane in the set, as SessionAdoption keeps them. */
  async function member(r: Replica, id: string, process: string, ttlMs: number): Promise<void> {
    await r.redis.client.xadd(r.redis.key('ingest'), '*', 'm', JSON.stringify({ join: id }));
    await r.redis.client.set(r.redis.key('replica', id), process, 'PX', ttlMs);
    await r.redis.client.sadd(r.redis.key('replicas'), id);
  }

  /** A lane's will, as the broker publishes it when the lane's connection ends without a DISCONNECT. */
  async function will(group: string, lane: string, process: string): Promise<void> {
    const client = await mqttClient(broker.url, { clientId: `${group}-publishes-a-will` });
    await publish(client, `lookout-hub/replicas/${group}/gone`, { lane, replica: process, connection: 'c1' });
    await endClient(client);
  }

  it('the leave of a member whose first lane left its will (a crash) is written once its heartbeat missed a beat, well before it expires; no join for it after', async () => {
    const a = await replica('m4:', 'a');
    await waitFor('one member', () => members(a) === 1);
    // Its process died half a second after its last beat: 3.5 s of heartbeat left, which the rounds would wait out, then two rounds more.
    await member(a, 'm4:crashed-0', 'process-crashed', 3_500);
    await waitFor('the crashed one counted', () => members(a) === 2);
    await will('m4', 'm4:crashed-0', 'process-crashed');
    await waitFor('its leave written on its will', async () => (await changes(a.redis)).includes('{"leave":"m4:crashed-0"}'), 3_000);
    await waitFor('one member again', () => members(a) === 1);
    assert.equal(await a.redis.client.exists(a.redis.key('replica', 'm4:crashed-0')), 0, 'its heartbeat deleted with the leave');
    await sleep(2_500);
    assert.equal((await changes(a.redis)).at(-1), '{"leave":"m4:crashed-0"}', 'no join written for it by the heartbeat rounds');
  });

  it('a member whose first lane left its will but whose process beats on (its connection dropped) stays a member', async () => {
    const a = await replica('m5:', 'a');
    await waitFor('one member', () => members(a) === 1);
    await member(a, 'm5:blip-0', 'process-blip', 4_000);
    const beating = setInterval(() => void a.redis.client.set(a.redis.key('replica', 'm5:blip-0'), 'process-blip', 'PX', 4_000), 500);
    try {
      await waitFor('the member counted', () => members(a) === 2);
      await will('m5', 'm5:blip-0', 'process-blip');
      // Longer than the will's leave waits for a missed beat (a heartbeat's time to live).
      await sleep(5_000);
      assert.ok(!(await changes(a.redis)).includes('{"leave":"m5:blip-0"}'), 'no leave written');
      assert.equal(members(a), 2);
    } finally {
      clearInterval(beating);
    }
  });

  it('a saved point can be read again from while nothing after it was trimmed and what follows it is young enough', async () => {
    const a = await replica('m3:', 'a', 2_000);
    await waitFor('its join read', () => members(a) === 1);
    const [[join]] = await a.redis.client.xrange(a.redis.key('ingest'), '-', '+', 'COUNT', 1);
    const next = (await a.redis.client.xadd(a.redis.key('ingest'), '*', 'x', '1'))!;
    assert.equal(await a.relay.replayable(join), true, 'the oldest entry, a new one after it');
    assert.equal(await a.relay.replayable('0-0'), false, 'before the oldest entry: what came between may have been trimmed');
    assert.equal(await a.relay.replayable(next), true, 'nothing after it');
    await sleep(1_800);
    assert.equal(await a.relay.replayable(join), false, 'what follows it is older than 80 % of the retention: the trimming could overtake a replay');
    assert.equal(await a.relay.replayable(next), true, 'still nothing after it');
  });
});
