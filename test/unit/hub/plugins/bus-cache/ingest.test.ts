import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { MemoryBus } from '../../../../../core/src/bus/memory-bus.js';
import { topicMatches } from '../../../../../core/src/bus/bus-port.js';
import { BUS_SUFFIXES } from '../../../../../core/src/contracts/bus-contracts.js';
import { CacheEntrySchema } from '../../../../../core/src/contracts/cache-entry.js';
import type { RunningHub } from '../../../../../hub/src/start-hub.js';
import { jsonDeeperThan } from '../../../../../core/src/json/json-depth.js';
import { INGEST_SUBSCRIPTIONS, SPEC_DEFAULT_SUBSCRIPTIONS } from '../../../../../hub/plugins/bus-cache/src/subscriptions.js';
import { api, msg, sleep, testHub, waitFor } from '../../../../support/hub-helpers.js';

const send = (bus: MemoryBus, topic: string, payload: unknown, retain = false) =>
  bus.publish(topic, Buffer.isBuffer(payload) || typeof payload === 'string' ? payload : JSON.stringify(payload), { retain });

/** A registry file naming these devices: the cache keeps entries only for devices the hub knows. */
async function registryNaming(ids: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lookout-ingest-'));
  const file = join(dir, 'registry.json');
  await writeFile(file, JSON.stringify({ devices: ids.map((device_id) => ({ device_id })) }));
  return file;
}

describe('bus cache ingest (in-process bus)', () => {
  let hub: RunningHub;
  let bus: MemoryBus;
  before(async () => {
    bus = new MemoryBus();
    const registryFile = await registryNaming(['ov-1', 'cam-1', 'cam-2', '__proto__', 'ghost', 'quiet', 'gone']);
    hub = await testHub({ bus, staleSec: 1, maxMessageBytes: 4096, registryFile });
  });
  after(async () => {
    await hub.close();
    await bus.close();
  });
  const config = async () => (await api(hub.url, '/fleet/mqtt/config')).body;
  const latest = async (id: string) => (await api(hub.url, `/fleet/mqtt/latest?device=${id}`)).body.devices[id];

  it('subscribes to the spec defaults plus hello, each topic matched by exactly one filter', async () => {
    const c = await config();
    assert.deepEqual(c.spec_default_subscriptions, [...SPEC_DEFAULT_SUBSCRIPTIONS]);
    assert.ok(c.topics_subscribed.includes('devices/+/hello'));
    const topics = [
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
    ].map((s) => `devices/d1/${s}`);
    for (const topic of topics) {
      assert.equal(c.topics_subscribed.filter((f: string) => topicMatches(f, topic)).length, 1, topic);
    }
    // Whatever a spec default filter matches, the hub receives.
    for (const filter of SPEC_DEFAULT_SUBSCRIPTIONS) {
      for (const topic of topics.filter((t) => topicMatches(filter, t)))
        assert.ok(
          c.topics_subscribed.some((f: string) => topicMatches(f, topic)),
          `${filter} ${topic}`,
        );
    }
    assert.equal(c.ingest.connected, true);
    assert.equal(c.limits.reorder_window_ms, 5000, 'the default wait of an unknown device’s message for its hello');
  });

  it('counts each message once, at both levels of telemetry and events', async () => {
    const before = (await config()).ingest.messages;
    // telemetry matches devices/+/telemetry and devices/+/telemetry/#; events matches events and events/#.
    await send(bus, 'devices/ov-1/telemetry', msg.telemetry());
    await send(bus, 'devices/ov-1/telemetry/wifi', { timestamp: new Date().toISOString(), rssi_dbm: -61, ssid: 'yard' });
    await send(bus, 'devices/ov-1/events', { timestamp: new Date().toISOString(), type: 'automation_log' });
    await send(bus, 'devices/ov-1/events/incident', msg.incident());
    const after = await config();
    assert.equal(after.ingest.messages - before, 4);
    const entry = await latest('ov-1');
    assert.deepEqual(Object.keys(entry.topics).sort(), ['events', 'events/incident', 'telemetry', 'telemetry/wifi']);
    for (const t of Object.values<{ count: number }>(entry.topics)) assert.equal(t.count, 1);
  });

  it('counts a redelivered message once (QoS 1 after a broker restart, a retained status after a hub restart)', async () => {
    const once = msg.telemetry();
    await send(bus, 'devices/ov-1/telemetry', once);
    const counted = (await latest('ov-1')).topics.telemetry.count;
    await send(bus, 'devices/ov-1/telemetry', once);
    assert.equal((await latest('ov-1')).topics.telemetry.count, counted, 'the same message again is not a new one');
    await send(bus, 'devices/ov-1/telemetry', { ...once, telemetry: { ...once.telemetry, fps: 3 } });
    assert.equal((await latest('ov-1')).topics.telemetry.count, counted + 1, 'same stamp, other content: a new message');
  });

  it('keeps the latest valid message per device and topic, with the spec fields', async () => {
    await send(bus, 'devices/cam-1/status', msg.status('cam-1'), true);
    await send(bus, 'devices/cam-1/telemetry', msg.telemetry(51.5, 9));
    await send(bus, 'devices/cam-1/dets', msg.dets(2, 40));
    await send(bus, 'devices/cam-1/health', msg.health('cam-1', 'WARNING'));
    await send(bus, 'devices/cam-1/data_manifest', msg.manifest(['a.h265', 'b.h265', 'c.h265']));
    await send(bus, 'devices/cam-1/events/incident', msg.incident('forklift too close'));
    await send(bus, 'devices/cam-1/events/automation_log', { timestamp: new Date().toISOString(), message: 'rule ran' });
    const e = await latest('cam-1');
    assert.ok(CacheEntrySchema.safeParse(e).success, JSON.stringify(CacheEntrySchema.safeParse(e).error?.issues));
    assert.equal(e.status.state, 'online');
    assert.equal(e.payload.telemetry.die_temp, 51.5);
    assert.equal(e.payload.telemetry.fps, 9);
    assert.equal(e.dets.length, 2);
    assert.equal(e.dets[0].track_id, 40);
    assert.equal(e.person_count, 2);
    assert.equal(e.health.storage_health, 'WARNING');
    assert.deepEqual(
      e.recent_chunks.map((c: { name: string }) => c.name),
      ['c.h265', 'b.h265', 'a.h265'],
    );
    assert.equal(e.anomaly_alerts.length, 1);
    assert.equal(e.anomaly_alerts[0].type, 'incident');
    assert.equal(e.anomaly_alerts[0].message, 'forklift too close');
    assert.equal(e.stale_sec, 1);
    assert.equal(e.stale, false);
    assert.equal(e.online, true);
    assert.ok(e.age_s >= 0 && e.age_s < 1);
  });

  it('refuses non-JSON, oversized, too deep, schema-violating, empty and unknown-topic messages without touching the cache', async () => {
    const good = await latest('cam-1');
    const before = (await config()).ingest;
    const deep = '['.repeat(200) + ']'.repeat(200);
    const deepInLooseField = JSON.stringify({ ...msg.telemetry(), extra: JSON.parse('['.repeat(40) + ']'.repeat(40)) });
    await send(bus, 'devices/cam-1/telemetry', 'not json {');
    await send(bus, 'devices/cam-1/telemetry', Buffer.alloc(5000, 0x20));
    await send(bus, 'devices/cam-1/telemetry', deep);
    await send(bus, 'devices/cam-1/telemetry', deepInLooseField);
    await send(bus, 'devices/cam-1/telemetry', { ...msg.telemetry(), telemetry: { die_temp: 'hot', fps: 10 } });
    await send(bus, 'devices/cam-1/dets', { ...msg.dets(), dets: [{ c: -1, p: 2, b: [1] }] });
    await send(bus, 'devices/cam-1/status', { state: 'maybe' });
    await send(bus, 'devices/cam-1/status', '');
    await send(bus, 'devices/cam-1/telemetry/bogus', msg.telemetry());
    await send(bus, 'devices/cam-1/telemetry', Buffer.from([0xff, 0xfe, 0x00, 0x7b]));
    const after = (await config()).ingest;
    assert.equal(after.invalid - before.invalid, 10);
    assert.equal(after.valid, before.valid);
    for (const reason of ['not_json', 'oversized', 'too_deep', 'schema', 'empty', 'unknown_topic']) {
      assert.ok((after.invalid_by_reason[reason] ?? 0) > (before.invalid_by_reason[reason] ?? 0), reason);
    }
    const now = await latest('cam-1');
    assert.deepEqual(now.status, good.status);
    assert.deepEqual(now.payload, good.payload);
    assert.deepEqual(now.dets, good.dets);
    assert.equal(now.invalid.telemetry.count, 6);
    assert.equal(now.invalid.dets.last_reason, 'schema');
    assert.match(now.invalid.dets.last_issue, /^dets\.0\./);
    assert.equal(now.invalid['telemetry/bogus'].last_reason, 'unknown_topic');
    const events = (await api(hub.url, '/debug/events?kind=ingest_invalid&device=cam-1&limit=100')).body.events;
    assert.equal(events.length, 10);
    assert.ok(events.every((e: { details: { reason: string } }) => typeof e.details.reason === 'string'));
    assert.ok(events.some((e: { details: { reason: string; bytes: number } }) => e.details.reason === 'oversized' && e.details.bytes === 5000));
    const metrics = (await api(hub.url, '/metrics')).text;
    assert.match(metrics, /lookout_hub_ingest_invalid_total\{topic="telemetry",reason="too_deep"\} 2/);
  });

  it('keeps a bounded account of a refused message, however long the field it names', async () => {
    // zod names a record key in its path: the issue would hold the key, and the ring a copy per message.
    const hello = { ...msg.hello('cam-1', ['127.0.0.1'], 9001), versions: { runtime: '1', plugins: { ['k'.repeat(3000)]: 1 } } };
    await send(bus, 'devices/cam-1/hello', hello);
    const [event] = (await api(hub.url, '/debug/events?kind=ingest_invalid&device=cam-1&limit=1')).body.events;
    assert.equal(event.topic, 'devices/cam-1/hello');
    assert.match(event.details.issue, /^versions\.plugins\.kkk/);
    assert.ok(event.details.issue.length <= 300, `issue of ${event.details.issue.length} characters`);
    const entry = await latest('cam-1');
    assert.ok(entry.invalid.hello.last_issue.length <= 300, `last_issue of ${entry.invalid.hello.last_issue.length} characters`);
  });

  it('refuses a topic longer than 512 characters before looking it up anywhere', async () => {
    // V8 hashes a string of more than 16 383 characters by its length alone: long topics of one
    // length would all collide in the hub's maps, each message costing a scan of the ones before.
    const before = (await config()).ingest;
    const id = `long-${'x'.repeat(600)}`;
    const topic = `devices/${id}/status`;
    await send(bus, topic, msg.status(id));
    const after = (await config()).ingest;
    assert.equal(after.invalid_by_reason.unknown_topic - (before.invalid_by_reason.unknown_topic ?? 0), 1);
    assert.equal(after.valid, before.valid);
    assert.equal((await api(hub.url, '/fleet/mqtt/latest')).body.devices[id], undefined);
    const [event] = (await api(hub.url, '/debug/events?kind=ingest_invalid&limit=1')).body.events;
    assert.ok(event.message.startsWith(`unknown_topic: topic of ${topic.length} characters`), event.message);
    assert.ok(event.topic.length <= 128);
  });

  it('lists a device whatever its id, __proto__ included', async () => {
    // A valid topic level: as a plain object key it would set the answer's prototype and vanish.
    await send(bus, 'devices/__proto__/status', msg.status('__proto__'));
    await send(bus, 'devices/__proto__/telemetry/__proto__', msg.telemetry());
    const all = (await api(hub.url, '/fleet/mqtt/latest')).body;
    assert.ok(Object.hasOwn(all.devices, '__proto__'), 'listed in /fleet/mqtt/latest');
    assert.equal(all.count, Object.keys(all.devices).length);
    assert.ok(Object.hasOwn(all.devices['__proto__'].invalid, 'telemetry/__proto__'), 'its invalid suffix listed');
    assert.ok(Object.hasOwn((await api(hub.url, '/fleet/health')).body.devices, '__proto__'), 'listed in /fleet/health');
  });

  it('counts the invalid messages of a device that never sent a valid one without listing it', async () => {
    await send(bus, 'devices/ghost/telemetry', 'garbage');
    const all = (await api(hub.url, '/fleet/mqtt/latest')).body;
    assert.equal(all.devices.ghost, undefined);
    await send(bus, 'devices/ghost/telemetry', msg.telemetry());
    const ghost = await latest('ghost');
    assert.equal(ghost.invalid.telemetry.count, 1, 'earlier invalid counts follow the device');
  });

  it('marks an entry stale past stale_sec and then not online', async () => {
    await send(bus, 'devices/quiet/status', msg.status('quiet'));
    assert.equal((await latest('quiet')).stale, false);
    await sleep(1300);
    const e = await latest('quiet');
    assert.equal(e.stale, true);
    assert.equal(e.online, false);
    assert.ok(e.age_s > 1);
    const staleOnly = (await api(hub.url, '/fleet/mqtt/latest?stale=true')).body.devices;
    assert.ok(staleOnly.quiet);
    const health = (await api(hub.url, '/fleet/health?device=quiet')).body.devices.quiet;
    assert.equal(health.presence, 'stale');
  });

  it('shows an offline status as offline', async () => {
    await send(bus, 'devices/gone/status', msg.status('gone', 'offline'));
    const e = await latest('gone');
    assert.equal(e.online, false);
    const h = (await api(hub.url, '/fleet/health?device=gone')).body.devices.gone;
    assert.equal(h.presence, 'offline');
    const presence = (await api(hub.url, '/debug/events?kind=presence&device=gone')).body.events;
    assert.equal(presence.at(-1).details.state, 'offline');
  });

  it('serves /fleet/health from the cache: storage, recorder, readiness', async () => {
    await send(bus, 'devices/cam-2/status', msg.status('cam-2'));
    await send(bus, 'devices/cam-2/telemetry', msg.telemetry());
    await send(bus, 'devices/cam-2/health', msg.health('cam-2', 'CRITICAL'));
    const body = (await api(hub.url, '/fleet/health')).body;
    const d = body.devices['cam-2'];
    assert.equal(d.storage_health, 'CRITICAL');
    // Its health says 3 chunks but no data_manifest says when: not "ok" (the health message's own status).
    assert.equal(d.recorder.status, null);
    assert.match(d.recorder.reason, /3 chunks/);
    assert.equal(d.recorder.chunk_count, 3);
    assert.equal(d.readiness.grade, 'not_ready');
    assert.ok(d.readiness.failing.includes('storage_ok'));
    assert.equal(body.fleet.status, 'critical');
    assert.ok(body.fleet.storage_health.CRITICAL >= 1);
    const rec = (await api(hub.url, '/debug/events?kind=recorder_status&device=cam-2')).body.events;
    assert.equal(rec.at(-1).details.storage_health, 'CRITICAL');
  });
});

describe('retained messages', () => {
  it('dates a retained message by its own timestamp, not by when the hub got it', async () => {
    const bus = new MemoryBus();
    // Retained before the hub subscribes: delivered to it flagged as retained, as a broker does.
    await send(bus, 'devices/old-1/status', { ...msg.status('old-1'), timestamp: new Date(Date.now() - 3600_000).toISOString() }, true);
    const hub = await testHub({ bus, registryFile: await registryNaming(['old-1']) });
    try {
      const e = (await api(hub.url, '/fleet/mqtt/latest?device=old-1')).body.devices['old-1'];
      assert.equal(e.topics.status.retained, true);
      assert.equal(e.stale, true);
      assert.ok(e.age_s >= 3599, String(e.age_s));
      await send(bus, 'devices/old-1/status', msg.status('old-1'), true);
      const fresh = (await api(hub.url, '/fleet/mqtt/latest?device=old-1')).body.devices['old-1'];
      assert.equal(fresh.stale, false);
    } finally {
      await hub.close();
      await bus.close();
    }
  });
});

describe('bus cache limits', () => {
  it('tracks at most max devices and says how many were refused', async () => {
    const bus = new MemoryBus();
    const hub = await testHub({ bus, env: { LOOKOUT_HUB_MAX_DEVICES: '3' } });
    try {
      for (let i = 0; i < 5; i++) await send(bus, `devices/d${i}/hello`, msg.hello(`d${i}`, ['127.0.0.1'], 9000 + i));
      const c = (await api(hub.url, '/fleet/mqtt/config')).body;
      assert.equal(c.ingest.device_count, 3);
      assert.equal(c.ingest.refused_devices, 2);
      assert.equal((await api(hub.url, '/fleet/mqtt/latest')).body.count, 3);
    } finally {
      await hub.close();
      await bus.close();
    }
  });

  it('never creates an entry for a made-up device id, and bounds entries whatever the topic', async () => {
    const bus = new MemoryBus();
    const hub = await testHub({
      bus,
      registryFile: await registryNaming(['named-1']),
      env: { LOOKOUT_HUB_MAX_DEVICES: '3', LOOKOUT_HUB_REORDER_WINDOW_MS: '50' },
    });
    try {
      // Before: one valid status from any client under devices/<any id>/ listed the device.
      for (let i = 0; i < 50; i++) {
        await send(bus, `devices/made-up-${i}/status`, msg.status(`made-up-${i}`), true);
        await send(bus, `devices/made-up-${i}/dets`, msg.dets());
      }
      // Refused once they waited their window for a hello that never came.
      let c = await waitFor('the made-up devices’ messages refused', async () => {
        const body = (await api(hub.url, '/fleet/mqtt/config')).body;
        return body.ingest.refused_unknown_devices === 100 && body;
      });
      assert.equal(c.ingest.device_count, 0);
      assert.equal(c.ingest.held_unknown, 0);
      assert.equal((await api(hub.url, '/fleet/mqtt/latest')).body.count, 0);
      assert.deepEqual((await api(hub.url, '/fleet/health')).body.devices['made-up-0'], undefined);
      assert.match((await api(hub.url, '/metrics')).text, /lookout_hub_ingest_invalid_total\{topic="status",reason="unknown_device"\} 50/);
      const [event] = (await api(hub.url, '/debug/events?kind=ingest_invalid&limit=1')).body.events;
      assert.equal(event.details.reason, 'unknown_device');
      // A device the registry file names, and one that announced a valid hello, are known.
      await send(bus, 'devices/named-1/status', msg.status('named-1'));
      await send(bus, 'devices/cam-9/hello', msg.hello('cam-9', ['127.0.0.1'], 9009));
      await send(bus, 'devices/cam-9/status', msg.status('cam-9'));
      assert.deepEqual(Object.keys((await api(hub.url, '/fleet/mqtt/latest')).body.devices).sort(), ['cam-9', 'named-1']);
      // Hellos of made-up ids fill the cache up to its bound, and no further.
      for (let i = 0; i < 10; i++) await send(bus, `devices/flood-${i}/hello`, msg.hello(`flood-${i}`, ['127.0.0.1'], 9100 + i));
      c = (await api(hub.url, '/fleet/mqtt/config')).body;
      assert.equal(c.ingest.device_count, 3);
      assert.equal(c.ingest.refused_devices, 9);
    } finally {
      await hub.close();
      await bus.close();
    }
  });

  it('makes room for a device the registry names by forgetting the longest-silent hello-only one', async () => {
    const bus = new MemoryBus();
    const hub = await testHub({ bus, registryFile: await registryNaming(['named-1', 'named-2']), env: { LOOKOUT_HUB_MAX_DEVICES: '2' } });
    try {
      await send(bus, 'devices/junk-1/hello', msg.hello('junk-1', ['127.0.0.1'], 9001));
      await sleep(5);
      await send(bus, 'devices/junk-2/hello', msg.hello('junk-2', ['127.0.0.1'], 9002));
      await send(bus, 'devices/named-1/status', msg.status('named-1'));
      await send(bus, 'devices/named-2/status', msg.status('named-2'));
      assert.deepEqual(Object.keys((await api(hub.url, '/fleet/mqtt/latest')).body.devices).sort(), ['named-1', 'named-2']);
      // Full of named devices: a new hello-only device waits outside.
      await send(bus, 'devices/junk-3/hello', msg.hello('junk-3', ['127.0.0.1'], 9003));
      const c = (await api(hub.url, '/fleet/mqtt/config')).body;
      assert.equal(c.ingest.device_count, 2);
      assert.equal(c.ingest.refused_devices, 1);
    } finally {
      await hub.close();
      await bus.close();
    }
  });
});

describe('messages of a device before its hello (hub replicas apply a shared stream in which another replica’s hello may come later)', () => {
  it('are in the latest cache once the hello comes, in order and counted; a device that never says hello is refused after the window', async () => {
    const bus = new MemoryBus();
    const hub = await testHub({ bus, env: { LOOKOUT_HUB_REORDER_WINDOW_MS: '1000' } });
    try {
      await send(bus, 'devices/late-hello/status', msg.status('late-hello'));
      await send(bus, 'devices/late-hello/telemetry', { ...msg.telemetry(), seq: 1 });
      await send(bus, 'devices/late-hello/telemetry', { ...msg.telemetry(), seq: 2 });
      await send(bus, 'devices/no-hello/status', msg.status('no-hello'));
      const waiting = (await api(hub.url, '/fleet/mqtt/config')).body;
      assert.equal(waiting.limits.reorder_window_ms, 1000);
      assert.equal(waiting.ingest.held_unknown, 4);
      assert.equal(waiting.ingest.refused_unknown_devices, 0);
      assert.equal((await api(hub.url, '/fleet/mqtt/latest')).body.devices['late-hello'], undefined);
      await send(bus, 'devices/late-hello/hello', msg.hello('late-hello', ['127.0.0.1'], 9001));
      const e = (await api(hub.url, '/fleet/mqtt/latest?device=late-hello')).body.devices['late-hello'];
      assert.equal(e.payload.seq, 2);
      assert.equal(e.topics.telemetry.count, 2);
      assert.equal(e.topics.status.count, 1);
      assert.equal(e.online, true);
      const c = await waitFor('the silent device’s status refused', async () => {
        const body = (await api(hub.url, '/fleet/mqtt/config')).body;
        return body.ingest.refused_unknown_devices === 1 && body;
      });
      assert.equal(c.ingest.held_unknown, 0);
      assert.equal(c.ingest.messages, 5);
      assert.equal(c.ingest.valid, 4);
      // The ring never stores an unknown device's id as a device: the topic names it.
      const events = (await api(hub.url, '/debug/events?kind=ingest_invalid&limit=10')).body.events;
      const refused = events.filter((ev: { topic: string }) => ev.topic === 'devices/no-hello/status');
      assert.equal(refused.length, 1);
      assert.equal(refused[0].details.reason, 'unknown_device');
      assert.match((await api(hub.url, '/metrics')).text, /lookout_hub_ingest_invalid_total\{topic="status",reason="unknown_device"\} 1/);
      assert.equal((await api(hub.url, '/fleet/mqtt/latest')).body.devices['no-hello'], undefined);
    } finally {
      await hub.close();
      await bus.close();
    }
  });
});

describe('refused messages in memory', () => {
  it('keep no more of themselves than their cut issue', async () => {
    // Heap use can only be compared after a full collection; node exposes gc on request.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const bus = new MemoryBus();
    const hub = await testHub({ bus, maxMessageBytes: 256 * 1024 });
    try {
      const refuse = async (n: number) => {
        for (let i = 0; i < n; i++) {
          // zod names the record key in its issue: 100 KB of it per message.
          const hello = { ...msg.hello('mem-1', ['127.0.0.1'], 9001), versions: { runtime: '1', plugins: { [`${i}${'k'.repeat(100_000)}`]: 1 } } };
          await send(bus, 'devices/mem-1/hello', hello);
        }
        // Two collections apart: the first frees, the second finds what sweeping left.
        for (let k = 0; k < 2; k++) {
          await sleep(100);
          gc();
        }
        return process.memoryUsage().heapUsed;
      };
      const before = await refuse(10);
      const after = await refuse(400);
      // Kept whole, 400 issues of 100 KB would be 40 MB; cut, they are a few hundred KB.
      assert.ok(after - before < 10 * 1024 * 1024, `heap grew by ${((after - before) / 1048576).toFixed(1)} MB`);
    } finally {
      await hub.close();
      await bus.close();
    }
  });
});

describe('ingest helpers', () => {
  it('measures JSON nesting on the bytes, ignoring brackets inside strings', () => {
    assert.equal(jsonDeeperThan(Buffer.from('{"a":[1,{"b":2}]}'), 3), false);
    assert.equal(jsonDeeperThan(Buffer.from('{"a":[1,{"b":[]}]}'), 3), true);
    assert.equal(jsonDeeperThan(Buffer.from('{"a":"[[[[[[[[\\"[[[["}'), 2), false);
    // Many brackets, shallow: past the quick count, the walk decides.
    const wide = Buffer.from(JSON.stringify({ dets: Array.from({ length: 100 }, () => ({ b: [1, 2, 3, 4] })) }));
    assert.equal(jsonDeeperThan(wide, 4), false);
    assert.equal(jsonDeeperThan(wide, 3), true);
    assert.equal(jsonDeeperThan(new Uint8Array(Buffer.from('[[[]]]')), 2), true);
  });

  it('subscribes with filters no topic matches twice (overlap makes brokers send duplicates)', () => {
    const suffixes = [...BUS_SUFFIXES.map((s) => s.replace('+', 'incident')), 'events', 'events/a/b', 'telemetry/x/y', 'cmd/reboot', 'status/x'];
    for (const suffix of suffixes) {
      const topic = `devices/d1/${suffix}`;
      assert.ok(INGEST_SUBSCRIPTIONS.filter((f) => topicMatches(f, topic)).length <= 1, topic);
    }
  });
});
