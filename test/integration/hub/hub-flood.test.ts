import { seededRandom } from '../../../lib/random/seeded-random.js';
/**
 * 10 000 malformed or schema-violating messages (random bytes, wrong types, oversized, deeply
 * nested, empty, made-up device ids and topics) through a real broker: the hub stays up, counts
 * every one as invalid, and what it cached from valid messages is untouched.
 */
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { contractForTopic } from '../../../core/src/contracts/bus-contracts.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { jsonDeeperThan } from '../../../core/src/json/json-depth.js';
import { startMosquitto, type Mosquitto } from '../../support/mosquitto.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const TOTAL = 10_000;
const MAX_BYTES = 64 * 1024;
const DEVICE = 'flood-cam';

/** A small deterministic PRNG, so a failure replays the same flood. */
const prng = (seed: number): (() => number) => {
  const random = seededRandom(seed);
  return () => random.next();
};

const SUFFIXES = [
  'status',
  'telemetry',
  'telemetry/wifi',
  'telemetry/can',
  'dets',
  'health',
  'data_manifest',
  'responses',
  'events',
  'events/incident',
  'hello',
];

/** One bad message: never valid against the topic's contract (checked), never over 4 × the limit. */
function badMessage(rand: () => number, i: number): { topic: string; payload: Buffer } {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const device = rand() < 0.7 ? DEVICE : `rnd-${Math.floor(rand() * 5000)}`;
  const suffix = rand() < 0.03 ? `telemetry/x${i % 7}` : pick(SUFFIXES);
  const topic = `devices/${device}/${suffix}`;
  const kind = i % 8;
  let payload: Buffer;
  if (kind === 0) payload = Buffer.from(Array.from({ length: 1 + Math.floor(rand() * 400) }, () => Math.floor(rand() * 256)));
  else if (kind === 1) payload = Buffer.from(JSON.stringify(wrongTypes(suffix, rand)));
  else if (kind === 2 && i % 200 === 2)
    payload = Buffer.from(JSON.stringify({ ...msg.telemetry(), pad: 'x'.repeat(MAX_BYTES + 1 + Math.floor(rand() * MAX_BYTES)) }));
  else if (kind === 2) payload = Buffer.from(JSON.stringify(msg.dets(3)).slice(0, Math.floor(rand() * 60)));
  else if (kind === 3) {
    const depth = 100 + Math.floor(rand() * 3000);
    payload = Buffer.from(`{"timestamp":"${new Date().toISOString()}","n":${'['.repeat(depth)}${']'.repeat(depth)}}`);
  } else if (kind === 4) payload = Buffer.from(pick(['', 'null', 'true', '0', '"text"', '[]', '{}', '[{"c":0}]', 'NaN', '{"a":1}{"b":2}', '\u0000']));
  else if (kind === 5)
    payload = Buffer.from(
      JSON.stringify({ ...validFor(suffix), timestamp: pick([42, null, '2026-13-45T99:99:99Z', 'yesterday', '2026-01-01T00:00:00+02:00']) }),
    );
  else if (kind === 6)
    payload = Buffer.from(
      JSON.stringify(validFor(suffix))
        .replace(/[0-9]/g, (d) => (rand() < 0.5 ? '"' + d + '"' : d))
        .replace(/"timestamp":"[^"]*"/, '"timestamp":1'),
    );
  else payload = Buffer.from([0xef, 0xbb, 0xbf, ...Buffer.from(JSON.stringify({ ...validFor(suffix), timestamp: undefined }))]);
  return { topic, payload };
}

function validFor(suffix: string): Record<string, unknown> {
  if (suffix === 'status') return msg.status(DEVICE);
  if (suffix === 'dets') return msg.dets(2);
  if (suffix === 'health') return msg.health(DEVICE);
  if (suffix === 'hello') return msg.hello(DEVICE, ['127.0.0.1'], 9999);
  if (suffix === 'data_manifest') return msg.manifest(['x.h265']);
  return msg.telemetry();
}

function wrongTypes(suffix: string, rand: () => number): unknown {
  const odd = [null, -1, 1e308, 'str', [], {}, true][Math.floor(rand() * 7)];
  const v = validFor(suffix);
  const keys = Object.keys(v).filter((k) => k !== 'timestamp');
  const key = keys[Math.floor(rand() * keys.length)] ?? 'timestamp';
  return {
    ...v,
    [key]: odd === undefined ? 'x' : typeof v[key] === typeof odd && !Array.isArray(odd) ? [odd] : odd,
    timestamp: rand() < 0.5 ? v.timestamp : 17,
  };
}

function isValid(topic: string, payload: Buffer): boolean {
  const c = contractForTopic(topic);
  // Nesting past the hub's depth limit is refused even where the loose schema would take it.
  if (!c || payload.length === 0 || payload.length > MAX_BYTES || jsonDeeperThan(payload, 32)) return false;
  try {
    return c.contract.schema.safeParse(JSON.parse(payload.toString('utf8'))).success;
  } catch {
    return false;
  }
}

function floodSuite(label: string, brokerUrl: () => string | undefined, setup: () => Promise<void>, teardown: () => Promise<void>): void {
  describe(`hub under a flood of bad messages on ${label}`, () => {
    let hub: RunningHub;
    before(async () => {
      await setup();
      const url = brokerUrl();
      // The registry names the device: the cache keeps entries for known devices only.
      const registryFile = join(await mkdtemp(join(tmpdir(), 'lookout-flood-')), 'registry.json');
      await writeFile(registryFile, JSON.stringify({ devices: [{ device_id: DEVICE }] }));
      hub = await testHub({ ...(url ? { mqttUrl: url } : {}), maxMessageBytes: MAX_BYTES, ringSize: 500, registryFile });
    });
    after(async () => {
      await hub?.close();
      await teardown();
    });

    it(`stays up and keeps its cache through ${TOTAL} malformed messages`, async () => {
      const client = await mqttClient(brokerUrl() ?? hub.brokerUrl);
      try {
        await publish(client, `devices/${DEVICE}/status`, msg.status(DEVICE), { retain: true });
        await publish(client, `devices/${DEVICE}/telemetry`, msg.telemetry(55.5, 10));
        await publish(client, `devices/${DEVICE}/dets`, msg.dets(3, 100));
        await publish(client, `devices/${DEVICE}/health`, msg.health(DEVICE));
        await publish(client, `devices/${DEVICE}/data_manifest`, msg.manifest(['a.h265', 'b.h265']));
        await publish(client, `devices/${DEVICE}/events/incident`, msg.incident());
        // Topics the spec's default filters match twice (telemetry and telemetry/#, events and events/#).
        await publish(client, `devices/${DEVICE}/telemetry/wifi`, { timestamp: new Date().toISOString(), rssi_dbm: -60 });
        await publish(client, `devices/${DEVICE}/events`, { timestamp: new Date().toISOString(), type: 'automation_log' });
        await waitFor('the valid messages cached', async () => (await api(hub.url, '/fleet/mqtt/config')).body.ingest.valid === 8);
        const counts = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].topics;
        for (const [suffix, t] of Object.entries(counts)) assert.equal((t as { count: number }).count, 1, `${suffix} counted once`);
        const before = (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE];
        const start = (await api(hub.url, '/fleet/mqtt/config')).body.ingest;

        const rand = prng(20261122);
        let oversized = 0;
        let deep = 0;
        for (let sent = 0; sent < TOTAL;) {
          const batch: Promise<void>[] = [];
          for (let j = 0; j < 200 && sent < TOTAL; j++) {
            let m = badMessage(rand, sent);
            while (isValid(m.topic, m.payload)) m = badMessage(rand, sent + 1);
            if (m.payload.length > MAX_BYTES) oversized++;
            if (m.payload.includes('[[[[[[[[[[')) deep++;
            batch.push(publish(client, m.topic, m.payload, { qos: 1 }));
            sent++;
          }
          await Promise.all(batch);
        }
        assert.ok(oversized >= 40 && deep >= 1000, `the flood holds oversized (${oversized}) and deep (${deep}) messages`);

        const end = await waitFor(
          'every flood message ingested',
          async () => {
            const s = (await api(hub.url, '/fleet/mqtt/config')).body.ingest;
            return s.messages - start.messages >= TOTAL ? s : undefined;
          },
          60_000,
          100,
        );
        assert.equal(end.messages - start.messages, TOTAL);
        assert.equal(end.invalid - start.invalid, TOTAL);
        assert.equal(end.valid, start.valid);
        for (const reason of ['not_json', 'oversized', 'too_deep', 'schema', 'empty', 'unknown_topic']) assert.ok(end.invalid_by_reason[reason] > 0, reason);

        const health = await api(hub.url, '/health');
        assert.equal(health.status, 200);
        const all = await api(hub.url, '/fleet/mqtt/latest');
        assert.equal(all.status, 200);
        assert.deepEqual(Object.keys(all.body.devices), [DEVICE], 'devices with only bad messages are not listed');
        const afterEntry = all.body.devices[DEVICE];
        for (const k of ['status', 'payload', 'dets', 'person_count', 'health', 'recent_chunks', 'anomaly_alerts'])
          assert.deepEqual(afterEntry[k], before[k], k);
        for (const [suffix, t] of Object.entries(before.topics))
          assert.equal((afterEntry.topics[suffix] as { count: number }).count, (t as { count: number }).count, suffix);
        const counted = Object.values(afterEntry.invalid as Record<string, { count: number }>).reduce((s, v) => s + v.count, 0);
        assert.ok(counted > 0.5 * TOTAL, `per-topic invalid counts of ${DEVICE}: ${counted}`);
        const ring = (await api(hub.url, '/debug/events?kind=ingest_invalid&limit=10000')).body;
        assert.ok(ring.events.length <= 500, 'the ring stays bounded');
        assert.ok(ring.suppressed > 0, "past a device's burst its repeated failures are counted, not kept");
        for (const path of ['/fleet/health', '/fleet/registry', '/debug/events', '/metrics', '/openapi.json'])
          assert.equal((await api(hub.url, path)).status, 200, path);
        // And it still ingests valid messages afterwards.
        await publish(client, `devices/${DEVICE}/telemetry`, msg.telemetry(60, 10));
        await waitFor(
          'a valid message after the flood',
          async () => (await api(hub.url, `/fleet/mqtt/latest?device=${DEVICE}`)).body.devices[DEVICE].payload.telemetry.die_temp === 60,
        );
      } finally {
        await endClient(client);
      }
    });
  });
}

floodSuite(
  'the embedded broker',
  () => undefined,
  () => Promise.resolve(),
  () => Promise.resolve(),
);

let mosquitto: Mosquitto | undefined;
floodSuite(
  'mosquitto',
  () => mosquitto!.url,
  async () => {
    // The hub may fall behind the publisher for a moment: mosquitto's default queue (1000) would drop.
    mosquitto = await startMosquitto({ maxQueuedMessages: 50_000 });
  },
  async () => {
    await mosquitto?.stop();
  },
);
