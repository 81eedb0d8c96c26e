/**
 * Two `lookout-hub` replicas (real processes) on mosquitto (MQTT 5 shared subscriptions) with their
 * state in a real redis-server: both answer the same fleet; one is SIGKILLed while 500
 * simulated devices publish numbered messages and nothing the broker accepted is missing from the
 * shared state; Redis stopped and started again: the replicas say stale, then catch up; one stopped
 * with SIGTERM under load: its session is taken over at once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { MqttClient } from 'mqtt';
import { DEFAULT_INGEST_CONNECTIONS } from '../../../hub/src/state/ingest-relay.js';
import { startHubReplica, writeReplicaPluginSet, type HubReplica as Replica } from '../../support/hub-replica.js';
import { unpackMessages } from '../../../hub/src/state/ingest-batch.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { api, endClient, mqttClient, msg, publish, sleep, TEST_FLEET_SECRET, waitFor } from '../../support/hub-helpers.js';

/** The 500 devices, each at one numbered message a second: light on a 2-core machine shared with others (about 20 s in all). */
const DEVICES = 500;
const RATE_HZ = 1;
const LOAD_SECONDS = 8;
const PREFIX = 'replicas-test:';

describe('hub replicas on mosquitto and redis-server', () => {
  let broker: Mosquitto;
  let redis: RedisServer;
  let inspect: Redis;
  let setFile: string;
  /** The replicas of the SIGTERM test: the one that stayed, and the one stopped (started again in the next). */
  let stopped: { stays: Replica; goes: Replica } | undefined;
  const replicas: Replica[] = [];
  const devices = new Map<string, MqttClient>();
  /** Per device: the sequence numbers the broker acknowledged (PUBACK). */
  const accepted = new Map<string, Set<number>>();
  const ids = Array.from({ length: DEVICES }, (_, i) => `sim-${String(i).padStart(3, '0')}`);
  let seq = 0;

  const startReplica = async (name: string, dataDir: string): Promise<Replica> => {
    const replica = await startHubReplica({
      name,
      brokerUrl: broker.url,
      stateUrl: redis.url,
      statePrefix: PREFIX,
      mqttGroup: 'replicas-test',
      dataDir,
      pluginSet: setFile,
      fleetSecret: TEST_FLEET_SECRET,
      extraArgs: ['--stale-sec', '60', '--stream-retention-s', '600'],
    });
    replicas.push(replica);
    return replica;
  };

  const publishNumbered = async (id: string): Promise<void> => {
    const n = ++seq;
    await publish(devices.get(id)!, `devices/${id}/telemetry`, { ...msg.telemetry(), seq: n });
    accepted.get(id)!.add(n);
  };

  /** Every sequence number of each device in the shared stream; those found more than once go to `copies`. */
  const streamSeqs = async (copies?: Set<number>): Promise<Map<string, Set<number>>> => {
    const out = new Map<string, Set<number>>();
    let from = '-';
    for (;;) {
      const entries = await inspect.xrangeBuffer(`${PREFIX}ingest`, from, '+', 'COUNT', 5000);
      for (const [, fields] of entries) {
        // Only batches (`b`) carry messages; a membership change (`m`) or a record does not.
        const batch = fields.findIndex((f) => f.toString() === 'b');
        if (batch < 0) continue;
        for (const message of unpackMessages(fields[batch + 1])) {
          const m = /^devices\/([^/]+)\/telemetry$/.exec(message.topic);
          if (!m) continue;
          const body = JSON.parse(message.payload.toString()) as { seq?: number };
          if (typeof body.seq !== 'number') continue;
          let set = out.get(m[1]);
          if (!set) out.set(m[1], (set = new Set()));
          if (set.has(body.seq)) copies?.add(body.seq);
          set.add(body.seq);
        }
      }
      if (entries.length < 5000) return out;
      from = `(${entries[entries.length - 1][0].toString()}`;
    }
  };

  const latestSeqs = async (url: string): Promise<Record<string, number | undefined>> => {
    const body = (await api(url, '/fleet/mqtt/latest')).body as { devices: Record<string, { payload: { seq?: number } | null }> };
    return Object.fromEntries(ids.map((id) => [id, body.devices[id]?.payload?.seq]));
  };
  const lastAccepted = (): Record<string, number | undefined> => Object.fromEntries(ids.map((id) => [id, Math.max(...accepted.get(id)!)]));

  before(async () => {
    [broker, redis] = await Promise.all([startMosquitto({ maxQueuedMessages: 100_000, maxInflightMessages: 100 }), startRedis()]);
    inspect = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    inspect.on('error', () => undefined); // down on purpose in the last test
    const dir = mkdtempSync(join(tmpdir(), 'hub-replicas-'));
    setFile = writeReplicaPluginSet(dir, 'replicas-test');
    await Promise.all([startReplica('a', join(dir, 'a')), startReplica('b', join(dir, 'b'))]);
    for (const id of ids) {
      devices.set(id, await mqttClient(broker.url, { clientId: id }));
      accepted.set(id, new Set());
    }
    await Promise.all(
      ids.map(async (id, i) => {
        const c = devices.get(id)!;
        await publish(c, `devices/${id}/hello`, msg.hello(id, ['127.0.0.1'], 20_000 + i), { retain: true });
        await publish(c, `devices/${id}/status`, msg.status(id), { retain: true });
        await publish(c, `devices/${id}/health`, msg.health(id, i % 10 === 0 ? 'WARNING' : 'OK'));
        if (i % 25 === 0) await publish(c, `devices/${id}/events/incident`, { timestamp: new Date().toISOString(), type: 'incident', detail: `fall ${i}` });
        await publishNumbered(id);
      }),
    );
  });

  afterEach((t) => {
    // A failure says what the replicas logged (warnings and errors only).
    if ((t as { passed?: boolean }).passed === false)
      for (const r of replicas) console.error(`--- replica ${r.name} stderr ---\n${r.stderr.join('').slice(-4000)}`);
  });

  after(async () => {
    for (const c of devices.values()) await endClient(c).catch(() => undefined);
    for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGTERM');
    await Promise.all(
      replicas.map((r) => new Promise((resolve) => (r.child.exitCode !== null || r.child.signalCode !== null ? resolve(null) : r.child.once('exit', resolve)))),
    );
    inspect?.disconnect();
    await broker?.stop();
    await redis?.stop();
  });

  it('both replicas answer the same fleet on every route that reads state', async () => {
    const [a, b] = replicas;
    await waitFor(
      'both replicas to hold every device with its numbered telemetry',
      async () => {
        const [sa, sb] = await Promise.all([latestSeqs(a.url), latestSeqs(b.url)]);
        return ids.every((id) => sa[id] !== undefined && sa[id] === sb[id]);
      },
      20_000,
    );
    const routes = ['/fleet/mqtt/latest', '/fleet/registry', '/fleet/health', '/debug/events?kind=presence,recorder_status&limit=1000'];
    for (const route of routes) {
      const [ra, rb] = await Promise.all([api(a.url, route), api(b.url, route)]);
      assert.equal(ra.status, 200, `${route} on a`);
      // The ring's events are the same on both; their seq numbers and the ring's own counts are each
      // replica's (what a replica records itself, such as the rate-bounded "registered by hello"
      // records, differs between them: docs/replicas.md).
      const [va, vb] = route.startsWith('/debug/events') ? [ringEvents(ra.body), ringEvents(rb.body)] : [ra.body, rb.body];
      assert.deepEqual(comparable(va), comparable(vb), `${route}: the same answer from either replica`);
    }
    const latest = (await api(a.url, '/fleet/mqtt/latest')).body as { count: number; devices: Record<string, { online: boolean; anomaly_alerts: unknown[] }> };
    assert.equal(latest.count, DEVICES);
    assert.ok(ids.every((id) => latest.devices[id].online));
    assert.equal(latest.devices['sim-025'].anomaly_alerts.length, 1, 'the incident of a device another replica may have taken');
    const [ca, cb] = await Promise.all([api(a.url, '/fleet/mqtt/config'), api(b.url, '/fleet/mqtt/config')]);
    for (const c of [ca.body, cb.body]) {
      assert.equal(c.state.backend, 'redis');
      assert.equal(c.state.replica, true);
      assert.equal(c.state.stale, false);
      assert.equal(c.state.details.stream_retention_s, 600, 'the shared stream keeps what --stream-retention-s says');
      assert.equal(c.state.details.mirror?.interval_ms, 1000, 'replicas divide the apply unless told not to (--mirror-interval-ms)');
    }
    // Read to the stream's end (they answer alike): no lag, as state.details and the Prometheus gauges say.
    await waitFor('each replica to measure how far behind the stream it reads', async () => {
      const lags = await Promise.all(replicas.map(async (r) => (await api(r.url, '/fleet/mqtt/config')).body.state.details.read_lag_ms));
      return lags.every((lag) => lag === 0);
    });
    const exposition = (await api(a.url, '/metrics')).text;
    assert.match(exposition, /^lookout_hub_replica_read_lag_seconds\{group="replicas-test"\} \d+(\.\d+)?$/m);
    assert.match(exposition, /^lookout_hub_replica_stale\{group="replicas-test"\} 0$/m);
    assert.equal(ca.body.ingest.valid, cb.body.ingest.valid, 'each replica applied every message once');
    assert.ok(ca.body.state.details.relayed > 0 && cb.body.state.details.relayed > 0, 'the broker shared the ingest between them');
  });

  it('one replica SIGKILLed under load: the other keeps serving, and nothing the broker accepted is missing from the shared state', async () => {
    const [a, b] = replicas;
    const load = (async () => {
      for (let tick = 0; tick < LOAD_SECONDS * RATE_HZ; tick++) {
        const started = Date.now();
        await Promise.all(ids.map((id) => publishNumbered(id)));
        await sleep(Math.max(0, 1000 / RATE_HZ - (Date.now() - started)));
      }
    })();
    await sleep(2_000);
    a.child.kill('SIGKILL');
    await new Promise((resolve) => a.child.once('exit', resolve));
    // Its lanes' wills (their connections ended without a DISCONNECT): the survivor takes their
    // sessions over at once, while their heartbeats still live. Before, it waited for them to expire,
    // and the broker queued half the fleet's messages for the dead replica meanwhile.
    const claimed = await waitFor(
      'the survivor to claim the killed replica’s sessions',
      async () => {
        const claims = await inspect.keys(`${PREFIX}adopt:*`);
        return claims.length === DEFAULT_INGEST_CONNECTIONS ? claims.map((k) => k.slice(`${PREFIX}adopt:`.length)) : undefined;
      },
      10_000,
      20,
    );
    const beating = await Promise.all(claimed.map((lane) => inspect.exists(`${PREFIX}replica:${lane}`)));
    assert.deepEqual(
      beating,
      claimed.map(() => 1),
      'taken over on its will, not when its heartbeat expired',
    );
    // Served alone meanwhile, every device still listed.
    for (let i = 0; i < 3; i++) {
      const r = await api(b.url, '/fleet/mqtt/latest');
      assert.equal(r.status, 200);
      assert.equal(r.body.count, DEVICES);
      await sleep(500);
    }
    await load;
    // Before the killed replica returns: the survivor took over its broker session (what was queued for it, what it had not acknowledged).
    await waitFor(
      'every accepted sequence number in the shared stream',
      async () => {
        const got = await streamSeqs();
        return ids.every((id) => [...accepted.get(id)!].every((n) => got.get(id)?.has(n)));
      },
      30_000,
      250,
    );
    await waitFor(
      'the survivor to have ended the adopted session',
      async () => (await api(b.url, '/fleet/mqtt/config')).body.state.details.adopted_sessions === DEFAULT_INGEST_CONNECTIONS,
    );
    // Restarted as a supervisor would: it joins the group again with a new session and catches up from the stream.
    const a2 = await startReplica('a-restarted', a.dataDir);
    const want = lastAccepted();
    await waitFor(
      'both replicas to show each device’s last accepted message',
      async () => {
        const [sa, sb] = await Promise.all([latestSeqs(a2.url), latestSeqs(b.url)]);
        return ids.every((id) => sa[id] === want[id] && sb[id] === want[id]);
      },
      30_000,
      250,
    );
  });

  it('Redis stopped: the replicas answer from their local copies marked stale; Redis back: they catch up with nothing lost', async () => {
    const live = replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
    assert.equal(live.length, 2);
    await redis.pause();
    await waitFor('both replicas to say stale', async () => {
      const states = await Promise.all(live.map((r) => api(r.url, '/fleet/mqtt/config')));
      return states.every((s) => s.body.state.stale === true && s.body.state.stale_since !== null);
    });
    for (const r of live) {
      const health = await api(r.url, '/fleet/health');
      assert.equal(health.body.state.stale, true, '/fleet/health says the replica answers from its local copy');
      assert.equal(health.body.state.backend, 'redis');
    }
    for (let round = 0; round < 3; round++) await Promise.all(ids.map((id) => publishNumbered(id)));
    for (const r of live) {
      const answer = await api(r.url, '/fleet/mqtt/latest');
      assert.equal(answer.status, 200, 'still served from the local copy');
      assert.equal(answer.body.count, DEVICES);
    }
    await redis.start();
    const want = lastAccepted();
    await waitFor(
      'both replicas current again, each device at its last accepted message',
      async () => {
        const states = await Promise.all(live.map((r) => api(r.url, '/fleet/mqtt/config')));
        if (!states.every((s) => s.body.state.stale === false)) return false;
        const seqs = await Promise.all(live.map((r) => latestSeqs(r.url)));
        return seqs.every((s) => ids.every((id) => s[id] === want[id]));
      },
      30_000,
      250,
    );
    const got = await streamSeqs();
    assert.ok(
      ids.every((id) => [...accepted.get(id)!].every((n) => got.get(id)?.has(n))),
      'what was taken during the outage was written to the stream when Redis returned',
    );
  });

  it('a replica stopped with SIGTERM under load: the other takes over its session at once, nothing accepted is missing', async () => {
    const live = replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
    assert.equal(live.length, 2);
    const [stays, goes] = live;
    stopped = { stays, goes };
    const before = (await api(stays.url, '/fleet/mqtt/config')).body.state.details.adopted_sessions as number;
    const firstSeq = seq + 1;
    const load = (async () => {
      for (let round = 0; round < 6; round++) {
        await Promise.all(ids.map((id) => publishNumbered(id)));
        await sleep(100);
      }
    })();
    await sleep(150);
    goes.child.kill('SIGTERM');
    await new Promise((resolve) => goes.child.once('exit', resolve));
    await load;
    await waitFor(
      'every accepted sequence number in the shared stream',
      async () => {
        const got = await streamSeqs();
        return ids.every((id) => [...accepted.get(id)!].every((n) => got.get(id)?.has(n)));
      },
      20_000,
      250,
    );
    const want = lastAccepted();
    await waitFor('the remaining replica to show each device’s last accepted message', async () => {
      const seqs = await latestSeqs(stays.url);
      return ids.every((id) => seqs[id] === want[id]);
    });
    await waitFor(
      'the stopped replica’s session taken over and ended',
      async () => (await api(stays.url, '/fleet/mqtt/config')).body.state.details.adopted_sessions === before + DEFAULT_INGEST_CONNECTIONS,
    );
    // What it took it wrote and acknowledged before it closed; what it had not taken the other took: each once.
    const copies = new Set<number>();
    await streamSeqs(copies);
    assert.deepEqual(
      [...copies].filter((n) => n >= firstSeq),
      [],
      'no message of the load written twice',
    );
  });

  it('the replica stopped under load, started again: it resumes where its saved cache ends and shows every device as the one that never stopped, counts included', async () => {
    assert.ok(stopped, 'runs after the replica stopped with SIGTERM');
    const { stays, goes } = stopped;
    const back = await startReplica(goes.name, goes.dataDir);
    // What the restarted one shows of a device comes from its saved cache and the stream after the point saved with it.
    const counts = async (url: string) => {
      const body = (await api(url, '/fleet/mqtt/latest')).body as { devices: Record<string, { topics: Record<string, { count: number }> }> };
      return Object.fromEntries(ids.map((id) => [id, body.devices[id]?.topics.telemetry?.count]));
    };
    const want = lastAccepted();
    let differ: string[] = [];
    await waitFor('the restarted replica to show what the other shows', async () => {
      const [seqs, here, there] = await Promise.all([latestSeqs(back.url), counts(back.url), counts(stays.url)]);
      differ = ids
        .filter((id) => seqs[id] !== want[id] || here[id] !== there[id])
        .map((id) => `${id}: seq ${seqs[id]}/${want[id]} count ${here[id]}/${there[id]}`);
      return differ.length === 0;
    }).catch((err: Error) => assert.fail(`${err.message}\n${differ.slice(0, 12).join('\n')}`));
  });
});

/** Drops what differs by the moment or the process that answers (request times, ages, uptime). */
function ringEvents(page: { events: Record<string, unknown>[] }): unknown[] {
  return page.events.map(({ seq: _seq, ...event }) => event);
}

function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (['generated_at', 'age_s', 'uptime_s', 'at', 'id', 'checked_at', 'path'].includes(k)) continue;
    out[k] = comparable(v);
  }
  return out;
}
