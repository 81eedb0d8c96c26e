/**
 * Two `lookout-hub` replicas (real processes, mosquitto, redis-server) that divide the apply
 * (`--mirror-interval-ms`): each applies every message of the devices it owns and only the newest
 * dets and telemetry of the others, when they are read. Both still answer every device with its
 * newest message and the same counts; each applied a part of the fleet's messages; when one stops,
 * the other owns every device and applies all of them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { MqttClient } from 'mqtt';
import { unpackMessages } from '../../../hub/src/state/ingest-batch.js';
import { streamIdBefore } from '../../../hub/src/state/stream-point.js';
import { startHubReplica, stopReplicas, writeReplicaPluginSet, type HubReplica } from '../../support/hub-replica.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { api, endClient, mqttClient, msg, publish, sleep, waitFor, TEST_FLEET_SECRET } from '../../support/hub-helpers.js';

const DEVICES = 60;
const ROUNDS = 10;
const PREFIX = 'mirror-test:';

interface LatestDevice {
  payload: { seq?: number } | null;
  person_count: number | null;
  topics: Record<string, { count: number }>;
}

describe('hub replicas that divide the apply (--mirror-interval-ms)', () => {
  let broker: Mosquitto;
  let redis: RedisServer;
  let dir: string;
  let setFile: string;
  const replicas: HubReplica[] = [];
  const devices = new Map<string, MqttClient>();
  const ids = Array.from({ length: DEVICES }, (_, i) => `mir-${String(i).padStart(3, '0')}`);
  let seq = 0;
  /** Per device: the last telemetry sequence number the broker accepted, and telemetry and dets sent. */
  const last = new Map<string, number>();
  let sentPerTopic = 0;
  let inspect: Redis;
  let startedAt = 0;

  /** `slot`: its place in `replicas` (a restarted one takes the place of the one it replaces). */
  const startReplica = async (name: string, slot: number): Promise<HubReplica> => {
    const replica = await startHubReplica({
      name,
      brokerUrl: broker.url,
      stateUrl: redis.url,
      statePrefix: PREFIX,
      mqttGroup: 'mirror-test',
      dataDir: join(dir, name),
      pluginSet: setFile,
      fleetSecret: TEST_FLEET_SECRET,
      // Hardly ever on the timer within the test: what a replica shows of another's device comes from reading it.
      extraArgs: ['--stale-sec', '60', '--mirror-interval-ms', '10000'],
    });
    replicas[slot] = replica;
    return replica;
  };

  const round = async (): Promise<void> => {
    sentPerTopic++;
    await Promise.all(
      ids.map(async (id, i) => {
        const c = devices.get(id)!;
        const n = ++seq;
        await publish(c, `devices/${id}/telemetry`, { ...msg.telemetry(), seq: n });
        await publish(c, `devices/${id}/dets`, msg.dets(1 + ((i + sentPerTopic) % 4)));
        last.set(id, n);
      }),
    );
  };

  /**
   * Every message sent so far is in the stream and the running replicas have read it to its end:
   * the two take a device's messages in turns, and one may write a round's after the other wrote the
   * next round's, which the cache counts as older and tells no listener (no event, no history).
   */
  const settled = () =>
    waitFor('the replicas to have read every message sent', async () => {
      let streamed = 0;
      for (const [, fields] of await inspect.xrangeBuffer(`${PREFIX}ingest`, '-', '+')) {
        const b = fields.findIndex((f) => f.toString() === 'b');
        if (b >= 0) streamed += unpackMessages(fields[b + 1]).length;
      }
      if (streamed < 2 * DEVICES * (1 + sentPerTopic)) return false;
      const [[end]] = await inspect.xrevrange(`${PREFIX}ingest`, '+', '-', 'COUNT', 1);
      return (await Promise.all(running().map(config))).every((c) => c.state.details.cursor === end);
    });
  const running = () => replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);

  type Bucket = { frames: number };
  let differ: string[] = [];
  /** The replicas' (the running ones') history buckets alike for every device (and at `want(id)` frames when given); the frames per device. */
  const historyAlike = async (want?: (id: string) => number, over = running()): Promise<Map<string, number>> => {
    const range = `&from=${startedAt - 60_000}&to=${Date.now() + 60_000}&bucket=60`;
    const buckets = async (r: HubReplica, id: string) => ((await api(r.url, `/fleet/history?device=${id}${range}`)).body as { buckets: Bucket[] }).buckets;
    const frames = (b: Bucket[]) => b.reduce((n, x) => n + x.frames, 0);
    const totals = new Map<string, number>();
    await waitFor('the replicas to show the same history of every device', async () => {
      differ = [];
      for (const id of ids) {
        const [first, ...others] = await Promise.all(over.map((r) => buckets(r, id)));
        if (others.some((o) => JSON.stringify(o) !== JSON.stringify(first))) differ.push(`${id}: ${JSON.stringify(first)} against ${JSON.stringify(others)}`);
        else if (want && frames(first) !== want(id)) differ.push(`${id}: ${frames(first)} frames, not ${want(id)}`);
        totals.set(id, frames(first));
      }
      return differ.length === 0;
    }).catch((err: Error) => assert.fail(`${err.message}\n${differ.slice(0, 6).join('\n')}`));
    return totals;
  };

  /** The history of `over` once it is alike there and has not changed for a few flushes (every owner's rows in it): frames per device. */
  const historyWhenStill = async (over = running()): Promise<Map<string, number>> => {
    let seen = '';
    return waitFor('the history to be still for a few flushes', async () => {
      const totals = await historyAlike(undefined, over);
      const now = JSON.stringify([...totals]);
      if (now === seen) return totals;
      seen = now;
      await sleep(600);
      return undefined;
    });
  };

  const config = async (r: HubReplica) => (await api(r.url, '/fleet/mqtt/config')).body;
  const latest = async (r: HubReplica, query = ''): Promise<Record<string, LatestDevice>> =>
    ((await api(r.url, `/fleet/mqtt/latest${query}`)).body as { devices: Record<string, LatestDevice> }).devices;

  before(async () => {
    [broker, redis] = await Promise.all([startMosquitto({ maxQueuedMessages: 100_000, maxInflightMessages: 100 }), startRedis()]);
    inspect = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    dir = mkdtempSync(join(tmpdir(), 'hub-mirror-'));
    setFile = writeReplicaPluginSet(dir, 'mirror-test', ['fleet-events', 'fleet-history']);
    // Every dets of a device to an event stream that asks (no pacing): what it misses is what the replica held back.
    process.env.LOOKOUT_EVENTS_DETS_INTERVAL_MS = '0';
    // The owners' minute rows reach the others at each flush.
    process.env.LOOKOUT_HISTORY_FLUSH_MS = '200';
    startedAt = Date.now();
    await Promise.all([startReplica('a', 0), startReplica('b', 1)]);
    await waitFor('each replica to see the other', async () => (await Promise.all(replicas.map(config))).every((c) => c.state.details.mirror?.replicas === 2));
    for (const id of ids) devices.set(id, await mqttClient(broker.url, { clientId: id }));
    await Promise.all(
      ids.map(async (id, i) => {
        const c = devices.get(id)!;
        await publish(c, `devices/${id}/hello`, msg.hello(id, ['127.0.0.1'], 21_000 + i), { retain: true });
        await publish(c, `devices/${id}/status`, msg.status(id), { retain: true });
      }),
    );
    for (let r = 0; r < ROUNDS; r++) await round();
  });

  afterEach((t) => {
    if ((t as { passed?: boolean }).passed === false)
      for (const r of replicas) console.error(`--- replica ${r.name} stderr ---\n${r.stderr.join('').slice(-4000)}`);
  });

  after(async () => {
    inspect?.disconnect();
    for (const c of devices.values()) await endClient(c).catch(() => undefined);
    await stopReplicas(replicas).catch(() => undefined);
    await broker?.stop();
    await redis?.stop();
  });

  it('each replica applies a part of the fleet, and both answer every device with its newest message and the same counts', async () => {
    const [a, b] = replicas;
    await waitFor('both replicas to have read the whole stream', async () => {
      const [ca, cb] = await Promise.all([config(a), config(b)]);
      return ca.state.details.cursor === cb.state.details.cursor && ca.state.details.relayed + cb.state.details.relayed === 2 * DEVICES * (ROUNDS + 1);
    });
    const [before_a, before_b] = await Promise.all([config(a), config(b)]);
    // Messages of devices the replica does not own were held and replaced by newer ones: it applied them once, not ten times.
    const total = 2 * DEVICES * (ROUNDS + 1);
    for (const c of [before_a, before_b]) {
      assert.ok(c.state.details.mirror.collapsed > 0, 'held messages were collapsed');
      assert.ok(c.state.details.applied < 0.8 * total, `a replica applied ${c.state.details.applied} of ${total}: the apply is divided`);
    }
    // One device read alone, then the whole fleet: each shows every device's newest message.
    const one = ids[7];
    for (const r of replicas) assert.equal((await latest(r, `?device=${one}`))[one].payload?.seq, last.get(one));
    const [la, lb] = await Promise.all([latest(a), latest(b)]);
    for (const id of ids) {
      for (const l of [la, lb]) {
        assert.equal(l[id].payload?.seq, last.get(id), `${id}: the newest telemetry`);
        assert.equal(l[id].topics.telemetry.count, ROUNDS, `${id}: every telemetry counted`);
        assert.equal(l[id].topics.dets.count, ROUNDS, `${id}: every dets counted`);
      }
      assert.equal(la[id].person_count, lb[id].person_count, `${id}: the same newest dets`);
    }
    const [ca, cb] = await Promise.all([config(a), config(b)]);
    assert.equal(ca.ingest.valid, cb.ingest.valid, 'the same number of valid messages on both');
    assert.equal(ca.ingest.messages, cb.ingest.messages, 'the same number of messages on both');
  });

  it('the fleet history is the same on both replicas: each device-minute as its owner folded every dets, the other taking the owner’s rows', async () => {
    const before = await historyAlike();
    const rounds = 3;
    for (let r = 0; r < rounds; r++) {
      await round();
      await settled();
    }
    await historyAlike((id) => before.get(id)! + rounds);
  });

  it('an event stream that asks for dets gets every dets of its devices, whichever replica owns them', async () => {
    const [a, b] = replicas;
    const one = ids[7];
    // The one device on both replicas (one of them does not own it), and every device on one replica.
    const streams = await Promise.all([openDets(a, one), openDets(b, one), openDets(b)]);
    try {
      const rounds = 3;
      for (let r = 0; r < rounds; r++) {
        await round();
        await settled();
      }
      await waitFor('every dets on each stream', () => Promise.resolve(streams.every((s) => s.complete(rounds)))).catch((err: Error) =>
        assert.fail(`${err.message}: ${streams.map((s) => s.summary(rounds)).join('; ')}`),
      );
    } finally {
      for (const s of streams) s.close();
    }
    // The streams gone, the replicas hold the others' dets again.
    await waitFor('the streams’ devices no longer followed', async () =>
      (await Promise.all(replicas.map(config))).every((c) => c.state.details.mirror.followers === 0),
    );
    const held = (await Promise.all(replicas.map(config))).map((c) => c.state.details.mirror.collapsed as number);
    let after: number[] = [];
    // Round after round: on a loaded machine a heartbeat read late can make a replica own every
    // device for a moment (then it holds nothing); each holds the other's again once both are seen.
    await waitFor(
      'both replicas to hold the other’s dets again',
      async () => {
        await round();
        after = (await Promise.all(replicas.map(config))).map((c) => c.state.details.mirror.collapsed as number);
        return after.every((n, i) => n > held[i]);
      },
      15_000,
      200,
    ).catch((err: Error) => assert.fail(`${err.message}: held again once the streams closed: ${held.join(', ')} -> ${after.join(', ')}`));
  });

  /** `GET /fleet/events?kind=dets[&device=…]`: counts the dets events per device as they come. */
  const openDets = async (r: HubReplica, device?: string) => {
    const abort = new AbortController();
    const res = await fetch(`${r.url}/fleet/events?kind=dets${device ? `&device=${device}` : ''}`, { signal: abort.signal });
    assert.equal(res.status, 200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const perDevice = new Map<string, number>();
    let text = '';
    let connected!: () => void;
    const ready = new Promise<void>((resolve) => (connected = resolve));
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        text += value;
        if (text.includes(': connected')) connected();
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const frame = text.slice(0, end);
          text = text.slice(end + 2);
          const data = /^event: dets\ndata: (.*)$/m.exec(frame);
          if (!data) continue;
          const id = (JSON.parse(data[1]) as { device_id: string }).device_id;
          perDevice.set(id, (perDevice.get(id) ?? 0) + 1);
        }
      }
    })();
    await ready;
    const wanted = device ? [device] : ids;
    return {
      complete: (n: number) => wanted.every((id) => (perDevice.get(id) ?? 0) >= n),
      summary: (n: number) => {
        const short = wanted.filter((id) => (perDevice.get(id) ?? 0) < n);
        return `${r.name}${device ? ` ${device}` : ''}: ${short.length} device(s) short of ${n} dets (${short
          .slice(0, 6)
          .map((id) => `${id} ${perDevice.get(id) ?? 0}`)
          .join(', ')})`;
      },
      close: () => abort.abort(),
    };
  };

  it('a replica restarted: what it held back when it stopped is in the cache it saved, both show the same counts again, and the same history', async () => {
    const before = await historyWhenStill();
    await round();
    // Read by both (the broker's acknowledgement of the round says nothing of that): a holds b's devices' messages.
    await settled();
    const [a] = replicas;
    assert.ok((await config(a)).state.details.mirror.held_devices > 0, 'a holds messages of devices b owns');
    await stopReplicas([a]);
    // While it is down: a round the other folds alone, and the other's cache saved past it (a restart
    // that resumed from the newest save, not its own, would miss the rows the other shared of it).
    await round();
    await settled();
    const [[end]] = await inspect.xrevrange(`${PREFIX}ingest`, '+', '-', 'COUNT', 1);
    await waitFor(
      'the other to save its cache past the round',
      async () => Object.values(await inspect.hgetall(`${PREFIX}state-points:bus-cache`)).some((at) => !streamIdBefore(at, end)),
      15_000,
    );
    await startReplica('a', 0);
    await waitFor('each replica to see the other again', async () =>
      (await Promise.all(replicas.map(config))).every((c) => c.state.details.mirror.replicas === 2),
    );
    await round();
    await waitFor('both replicas to show every device’s newest message and every message counted', async () => {
      const shown = await Promise.all(replicas.map(async (r) => ({ name: r.name, l: await latest(r) })));
      differ = shown.flatMap(({ name, l }) =>
        ids
          .filter((id) => !(l[id]?.payload?.seq === last.get(id) && l[id].topics.telemetry.count === sentPerTopic && l[id].topics.dets.count === sentPerTopic))
          .map(
            (id) =>
              `${name} ${id}: seq ${l[id]?.payload?.seq}/${last.get(id)} telemetry ${l[id]?.topics.telemetry.count} dets ${l[id]?.topics.dets.count} of ${sentPerTopic}`,
          ),
      );
      return differ.length === 0;
    }).catch((err: Error) => assert.fail(`${err.message}\n${differ.slice(0, 12).join('\n')}`));
    // It resumed from its own saved point, at its leave: what the other folded meanwhile came in the
    // other's rows, what it owns again from its join on it folded itself.
    await settled();
    // Three rounds: one before the stop, one while it was down, one after its start.
    await historyAlike((id) => before.get(id)! + 3);
  });

  it('a replica stopped: the other owns every device and applies all of its messages', async () => {
    const [a, b] = replicas;
    // The stopped one's last rows (folded since its last flush) reach the other as it stops.
    const before = await historyWhenStill([b]);
    await round();
    await settled();
    await stopReplicas([a]);
    await waitFor('the survivor to be alone', async () => (await config(b)).state.details.mirror.replicas === 1, 15_000);
    // What it held of the other's devices is applied on their next message, after which it holds nothing more.
    await round();
    await latest(b);
    const held = (await config(b)).state.details.mirror.collapsed as number;
    await round();
    await round();
    await settled();
    await waitFor('the survivor to show the newest message of every device', async () => {
      const l = await latest(b);
      return ids.every((id) => l[id].payload?.seq === last.get(id));
    });
    assert.equal((await config(b)).state.details.mirror.collapsed, held, 'nothing more is held back');
    await historyAlike((id) => before.get(id)! + 4);
  });
});
