import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { MqttClient } from 'mqtt';
import { LogRing } from '../../../core/src/log/log-ring.js';
import { createLogger } from '../../../core/src/log/logger.js';
import type { Logger } from 'lookout/core';
import { IngestRelay } from '../../../hub/src/state/ingest-relay.js';
import { RedisConnection } from '../../../hub/src/state/redis-connection.js';
import { endClient, mqttClient, publish, sleep, waitFor } from '../../support/hub-helpers.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { ReplyLossProxy } from '../../support/reply-loss-proxy.js';

const logger = createLogger({ level: 'silent' });
const MESSAGES = 300;

/** One replica's relay and the sequence numbers its handlers were given, in order. */
interface Replica {
  relay: IngestRelay;
  redis: RedisConnection;
  applied: number[];
}

/**
 * A stream write whose reply is lost (Redis ran the XADD, the connection dropped before its answer)
 * lands twice: ioredis sends it again once reconnected, or the relay keeps the batch and writes it
 * again when Redis returns. Every replica must still apply each message once. Two relays in this
 * process on a real mosquitto and redis-server; one reaches Redis through a proxy that loses the
 * replies and then cuts the connections.
 */
describe('ingest relay: a stream write whose reply was lost', () => {
  let broker: Mosquitto;
  let server: RedisServer;
  let proxy: ReplyLossProxy;
  let publisher: MqttClient;

  before(async () => {
    [broker, server] = await Promise.all([startMosquitto(), startRedis()]);
    proxy = await ReplyLossProxy.start(server.port);
    publisher = await mqttClient(broker.url, { clientId: 'lost-reply-publisher' });
  });
  after(async () => {
    await endClient(publisher);
    await proxy.close();
    await Promise.all([broker.stop(), server.stop()]);
  });

  /** Replicas not stopped yet: a test that fails stops them here, not at the runner's timeout. */
  const running = new Set<Replica>();
  afterEach(async () => stop([...running]));

  /** `resumeFrom`: the point a restarted replica reads its saved cache's (IngestRelay.resumePoint). */
  async function replica(
    url: string,
    prefix: string,
    name: string,
    options: { maxPending?: number; log?: Logger; resumeFrom?: { cursor?: string; applied?: string } } = {},
  ): Promise<Replica> {
    const log = options.log ?? logger;
    const redis = new RedisConnection({ url, prefix, logger: log, maxBackoffMs: 100 });
    await redis.ready();
    const relay = new IngestRelay({
      redis,
      mqttUrl: broker.url,
      clientId: `${prefix}${name}`,
      group: prefix,
      logger: log,
      ...(options.maxPending ? { maxPending: options.maxPending } : {}),
    });
    if (options.resumeFrom) relay.resumeFrom(options.resumeFrom);
    const applied: number[] = [];
    const r = { relay, redis, applied };
    running.add(r);
    await relay.subscribe('devices/+/telemetry', (_topic, payload) => applied.push((JSON.parse(payload.toString()) as { seq: number }).seq));
    relay.startReading();
    return r;
  }

  /** Publishes MESSAGES numbered telemetry messages, one every 5 ms; `meanwhile` starts after a third of them, as they go on. */
  async function publishAll(meanwhile: () => Promise<void>): Promise<void> {
    let happening: Promise<void> | undefined;
    for (let seq = 1; seq <= MESSAGES; seq++) {
      await publish(publisher, `devices/cam-${seq % 7}/telemetry`, { seq }, { qos: 1 });
      if (seq === MESSAGES / 3) happening = meanwhile();
      await sleep(5);
    }
    await happening;
  }

  /**
   * Each entry's copies in the stream, as their `l` flags in stream order: `0` written as taken,
   * `1` written back after an outage (applied where it was taken); `00` sent again by ioredis.
   */
  async function entryCopies(redis: RedisConnection): Promise<string[]> {
    const copies = new Map<string, string>();
    for (const [, fields] of await redis.client.xrange(redis.key('ingest'), '-', '+')) {
      const f = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i], fields[i + 1]);
      const key = `${f.get('o')}:${f.get('n')}`;
      copies.set(key, (copies.get(key) ?? '') + f.get('l'));
    }
    return [...copies.values()];
  }

  async function exactlyOnce(replicas: Replica[]): Promise<void> {
    const expected = Array.from({ length: MESSAGES }, (_, i) => i + 1);
    await waitFor('every replica to apply every message', () => replicas.every((r) => new Set(r.applied).size === MESSAGES));
    // Time for a second copy to arrive, if one were to be applied.
    await sleep(500);
    for (const [i, r] of replicas.entries()) {
      assert.deepEqual(
        [...r.applied].sort((a, b) => a - b),
        expected,
        `replica ${i} applied each message once`,
      );
    }
  }

  async function stop(replicas: Replica[]): Promise<void> {
    for (const r of replicas) {
      running.delete(r);
      await r.relay.close();
      await r.redis.close();
    }
  }

  it('reconnected at once: ioredis sends the write again, and each replica applies it once', async () => {
    const cut = await replica(proxy.url, 'resent:', 'cut');
    const other = await replica(server.url, 'resent:', 'other');
    await publishAll(async () => {
      proxy.loseReplies();
      await sleep(300);
      proxy.cut();
    });
    await exactlyOnce([cut, other]);
    assert.ok((await entryCopies(other.redis)).includes('00'), 'a write whose reply was lost was sent again');
    assert.ok(cut.relay.status().duplicates_skipped > 0 && other.relay.status().duplicates_skipped > 0);
    await stop([cut, other]);
  });

  it('Redis away for a second: the relay keeps the writes whose replies were lost and what it takes meanwhile, writes them back, and each replica applies each message once', async () => {
    const cut = await replica(proxy.url, 'kept:', 'cut');
    const other = await replica(server.url, 'kept:', 'other');
    await publishAll(async () => {
      proxy.loseReplies();
      await sleep(300);
      // The reconnects are refused for a second: ioredis gives up the writes in flight (their
      // replies lost), the relay keeps them and what it takes meanwhile, applied here.
      proxy.refuseFor(1_000);
      proxy.cut();
    });
    await exactlyOnce([cut, other]);
    const copies = await entryCopies(other.redis);
    assert.ok(copies.includes('01'), 'a batch whose reply was lost was kept and written back under its number');
    assert.ok(copies.includes('1'), 'what was taken while Redis was away was written back');
    assert.ok(cut.relay.status().duplicates_skipped > 0 && other.relay.status().duplicates_skipped > 0);
    await stop([cut, other]);
  });

  it('a bounded outage: what the bound dropped is all that the others miss, while the write-back is slow and more is taken', async () => {
    const ring = new LogRing();
    const cut = await replica(proxy.url, 'bound:', 'cut', { maxPending: 10, log: createLogger({ level: 'warn', ring }) });
    const other = await replica(server.url, 'bound:', 'other');
    await publishAll(async () => {
      // Away for a moment, then back on a slow link while messages still come: the write-back
      // waits while more is taken, and the bound drops the front of what is being written.
      proxy.delayReplies(200);
      proxy.refuseFor(300);
      proxy.cut();
    });
    await waitFor('the relay to write back what it kept', () => cut.relay.status().pending === 0 && !cut.relay.status().stale);
    const dropped = cut.relay.status().pending_dropped;
    assert.ok(dropped > 0, 'the bound dropped messages');
    // The operator is told, once the write-back is done, how many and from when.
    const told = ring.tail({ lines: 50, maxBytes: 1 << 20 }).lines.map((l) => JSON.parse(l.line) as { msg: string; dropped?: number; taken_from?: string });
    const drops = told.filter((l) => l.msg.includes('were dropped'));
    assert.equal(
      drops.reduce((n, l) => n + (l.dropped ?? 0), 0),
      dropped,
      JSON.stringify(drops),
    );
    assert.ok(drops.every((l) => !Number.isNaN(Date.parse(l.taken_from ?? ''))));
    await waitFor('the others to apply what was written back', () => new Set(other.applied).size === MESSAGES - dropped);
    await sleep(500);
    assert.equal(new Set(other.applied).size, MESSAGES - dropped, 'only what the bound dropped is missing');
    assert.equal(other.applied.length, new Set(other.applied).size, 'nothing applied twice');
    // Each message was written by the replica that took it, or counted as dropped there: never both.
    assert.equal(cut.relay.status().relayed + dropped + other.relay.status().relayed, MESSAGES, 'each message written or dropped, once');
    proxy.delayReplies(0);
    await stop([cut, other]);
  });

  it('a copy that lands after a replica restarted from the saved cache is skipped there too: what it applied is saved with the cursor', async () => {
    const a = await replica(server.url, 'restart:', 'a');
    const b = await replica(server.url, 'restart:', 'b');
    for (let seq = 1; seq <= 20; seq++) await publish(publisher, `devices/cam-${seq % 3}/telemetry`, { seq }, { qos: 1 });
    await waitFor('both to apply the 20', () => [a, b].every((r) => new Set(r.applied).size === 20));
    // What the state store saves beside b's cache; then b stops.
    const point = b.relay.resumePoint();
    await stop([b]);
    // The copy a lost reply makes: the same entry, its writer and number, again at the stream's end.
    const [[, fields]] = await a.redis.client.xrange(a.redis.key('ingest'), '-', '+', 'COUNT', 1);
    await a.redis.client.xadd(a.redis.key('ingest'), '*', ...fields);

    const restarted = await replica(server.url, 'restart:', 'b', { resumeFrom: point });
    await publish(publisher, 'devices/cam-0/telemetry', { seq: 21 }, { qos: 1 });
    await waitFor('the restarted replica to apply what came after its cache', () => restarted.applied.includes(21));
    await sleep(300);
    assert.deepEqual(restarted.applied, [21], 'the copy of an entry its cache holds was not applied again');
    assert.equal(restarted.relay.status().duplicates_skipped, 1);
    // A point an earlier version saved (a stream id alone) still resumes there, without a window.
    const older = await replica(server.url, 'restart:', 'c', { resumeFrom: { cursor: restarted.relay.status().cursor } });
    assert.equal(older.relay.status().cursor, restarted.relay.status().cursor);
    await stop([a, restarted, older]);
  });

  it('records a replica shares (publishRecord) reach the others in the stream, never itself; one that is not JSON is skipped and logged', async () => {
    const ring = new LogRing();
    const a = await replica(server.url, 'records:', 'a');
    const b = await replica(server.url, 'records:', 'b', { log: createLogger({ level: 'warn', ring }) });
    const heard = { a: [] as unknown[], b: [] as unknown[] };
    a.relay.onRecord('test/rows', (v) => heard.a.push(v));
    b.relay.onRecord('test/rows', (v) => heard.b.push(v));
    a.relay.publishRecord('test/rows', { rows: [1, 2] });
    b.relay.publishRecord('test/rows', { rows: [3] });
    a.relay.publishRecord('test/other', { not: 'heard' });
    // What a writer of another version (or a broken one) could leave: skipped, the reading goes on.
    await a.redis.client.xadd(a.redis.key('ingest'), '*', 'r', 'test/rows', 'v', '{"rows":', 'o', 'someone', 'n', '1');
    a.relay.publishRecord('test/rows', { rows: [4] });
    await waitFor('both to hear the other', () => heard.a.length === 1 && heard.b.length === 2);
    await sleep(200);
    assert.deepEqual(heard, { a: [{ rows: [3] }], b: [{ rows: [1, 2] }, { rows: [4] }] });
    assert.ok(ring.tail({ lines: 50, maxBytes: 1 << 20 }).lines.some((l) => l.line.includes('a replica record that is not JSON was skipped')));
    assert.equal(a.relay.status().records_lost, 0);
    await stop([a]);

    // Restarted (the same writer), it reads the stream from its start again: the others' records, not the ones it wrote.
    const again = await replica(server.url, 'records:', 'a');
    const heardAgain: unknown[] = [];
    again.relay.onRecord('test/rows', (v) => heardAgain.push(v));
    // One written while Redis is away waits for it.
    const cut = await replica(proxy.url, 'records:', 'cut');
    const accept = proxy.refuse();
    proxy.cut();
    await waitFor('the relay to see Redis away', () => !cut.relay.status().redis_connected);
    cut.relay.publishRecord('test/rows', { rows: [5] });
    await sleep(200);
    accept();
    await waitFor('the kept record written', () => heard.b.length === 3);
    await sleep(200);
    assert.deepEqual(heard.b.at(-1), { rows: [5] });
    assert.deepEqual(heardAgain, [{ rows: [3] }, { rows: [5] }], 'what it wrote before its restart is not heard again');
    assert.equal(cut.relay.status().records_lost, 0);
    await stop([b, again, cut]);
  });

  it('what a replica took while Redis was away is in a cache it saved meanwhile: restarted from that save, it applies the write-back of only what came after', async () => {
    const cut = await replica(proxy.url, 'outage-save:', 'cut');
    const send = async (from: number, to: number) => {
      for (let seq = from; seq <= to; seq++) await publish(publisher, `devices/cam-${seq % 3}/telemetry`, { seq }, { qos: 1 });
      await waitFor(`${to} applied`, () => new Set(cut.applied).size === to);
    };
    await send(1, 10);
    const accept = proxy.refuse();
    proxy.cut();
    await waitFor('the relay to see Redis away', () => !cut.relay.status().redis_connected);
    await send(11, 20);
    // What a save of the cache during the outage stores beside it: the cache holds 11 to 20, not what is taken next.
    const point = cut.relay.resumePoint();
    await send(21, 25);
    assert.equal(cut.relay.status().redis_connected, false, 'all of it taken during the outage');
    accept();
    await waitFor('Redis back and the kept messages written back', () => cut.relay.status().redis_connected && cut.relay.status().pending === 0, 10_000);
    await stop([cut]);

    const restarted = await replica(server.url, 'outage-save:', 'cut', { resumeFrom: point });
    await publish(publisher, 'devices/cam-0/telemetry', { seq: 26 }, { qos: 1 });
    await waitFor('the restarted replica to apply what came after its cache', () => restarted.applied.includes(26));
    await sleep(300);
    assert.deepEqual(restarted.applied, [21, 22, 23, 24, 25, 26], 'of the write-back, only what its cache does not hold');
    assert.throws(() => restarted.relay.resumeFrom(point), /after startReading/, 'the point is set before reading begins, never moved after');
    await stop([restarted]);
  });
});
