/**
 * The fleet history in SQLite (issue 29 item 1) with a real hub, its embedded broker and the
 * database in a temp dir: the answers equal the counts computed from the dets the test published
 * (person_count max and mean, distinct track ids per class), the last time a class was seen, the
 * incidents, OCR reads, chunks and presence changes; they survive a hub restart; retention trims
 * them; and the hub's MCP server answers the same through the official TypeScript client.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunningHub } from '../../../hub/src/start-hub.js';
import { api, endClient, mqttClient, msg, publish, testHub, waitFor } from '../../support/hub-helpers.js';

const FAST = { LOOKOUT_HISTORY_FLUSH_MS: '100' };
const CAR = 2;

/** A dets message with `persons` persons (track ids given) and `cars` cars (tracks from 500). */
function dets(personTracks: number[], cars = 0) {
  const people = personTracks.map((t, i) => ({ c: 0, p: 0.9, b: [i, 0, i + 10, 10], track_id: t }));
  const carDets = Array.from({ length: cars }, (_, i) => ({ c: CAR, p: 0.8, b: [i, 0, i + 20, 20], track_id: 500 + i }));
  return { ...msg.dets(0), dets: [...people, ...carDets], person_count: personTracks.length };
}

/** What the test publishes to cam-a, and the counts a reader computes from it by hand. */
const FRAMES = [dets([1, 2]), dets([1, 2, 3], 1), dets([3]), dets([], 2), dets([4, 5, 6, 7])];
const EXPECTED = {
  person_max: Math.max(...FRAMES.map((f) => f.person_count)),
  person_mean: Math.round((FRAMES.reduce((s, f) => s + f.person_count, 0) / FRAMES.length) * 1000) / 1000,
  unique_person_tracks: new Set(FRAMES.flatMap((f) => f.dets.filter((d) => d.c === 0).map((d) => d.track_id))).size,
  frames: FRAMES.length,
};

async function connectMcp(hub: RunningHub): Promise<Client> {
  const client = new Client({ name: 'fleet-history-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}/mcp`)));
  return client;
}

describe('fleet history in SQLite', () => {
  let dataDir: string;
  let t0: number;
  let span: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'fleet-history-'));
    t0 = Date.now() - 1000;
    const hub = await testHub({ dataDir, env: FAST });
    try {
      const client = await mqttClient(hub.brokerUrl);
      try {
        await publish(client, 'devices/cam-a/hello', msg.hello('cam-a', ['127.0.0.1'], 9, ['yard']));
        await publish(client, 'devices/cam-b/hello', msg.hello('cam-b', ['127.0.0.1'], 9, ['gate']));
        await publish(client, 'devices/cam-a/status', msg.status('cam-a', 'online'));
        await publish(client, 'devices/cam-a/health', msg.health('cam-a', 'WARNING'));
        for (const f of FRAMES) await publish(client, 'devices/cam-a/dets', f);
        // cam-b's track 1 is another person than cam-a's track 1.
        await publish(client, 'devices/cam-b/dets', dets([1]));
        await publish(client, 'devices/cam-a/events/incident', msg.incident('person at the gate'));
        await publish(client, 'devices/cam-a/events/ocr', {
          timestamp: new Date().toISOString(),
          type: 'ocr',
          track_id: 42,
          confidence: 0.93,
          token_ids: [5, 6, 7],
        });
        await publish(client, 'devices/cam-a/data_manifest', msg.manifest(['20261127T000000Z_1.h265']));
      } finally {
        await endClient(client);
      }
      span = `from=${t0 - 120_000}&to=${Date.now() + 120_000}`;
      await waitFor('every dets message counted', async () => (await api(hub.url, `/fleet/history/people?target=cam-b&${span}`)).body.frames === 1);
      await waitFor('both devices registered with the label', async () => {
        const r = (await api(hub.url, '/fleet/registry')).body;
        return ['cam-a', 'cam-b'].every((id) => r.shadows?.some((d: any) => d.device_id === id)) ? true : undefined;
      });
      await waitFor('cam-a counted', async () => (await api(hub.url, `/fleet/history/people?target=cam-a&${span}`)).body.frames === FRAMES.length);
    } finally {
      await hub.close();
    }
  });

  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('answers what the published dets count, survives a restart, and the MCP tools say the same with their sources', async () => {
    const hub = await testHub({ dataDir, env: FAST });
    const mcp = await connectMcp(hub);
    try {
      assert.ok(existsSync(join(dataDir, 'fleet-history.sqlite')));
      const a = (await api(hub.url, `/fleet/history/people?target=cam-a&${span}`)).body;
      assert.deepEqual({ person_max: a.person_max, person_mean: a.person_mean, unique_person_tracks: a.unique_person_tracks, frames: a.frames }, EXPECTED);
      assert.deepEqual(a.sources.devices, ['cam-a']);
      assert.equal(a.sources.kind, 'history');

      const yard = (await api(hub.url, `/fleet/history/people?target=camera&${span}`)).body;
      assert.equal(yard.unique_person_tracks, EXPECTED.unique_person_tracks + 1, 'a role sums its devices; track ids are per device');
      assert.deepEqual(yard.sources.devices, ['cam-a', 'cam-b']);

      const ranged = (await api(hub.url, `/fleet/history?device=cam-a&${span}&bucket=86400`)).body;
      assert.equal(ranged.device_id, 'cam-a');
      assert.ok(Array.isArray(ranged.samples), 'the hour’s shape is kept');
      const frames = ranged.buckets.reduce((s: number, b: any) => s + b.frames, 0);
      assert.equal(frames, FRAMES.length);
      const cars = ranged.buckets.map((b: any) => b.classes.car).filter(Boolean);
      assert.equal(Math.max(...cars.map((c: any) => c.max)), 2);
      assert.equal(ranged.buckets.at(-1).storage_health, 'WARNING');
      assert.equal(ranged.buckets.at(-1).thermal_state, 'NORMAL');

      const car = (await api(hub.url, '/fleet/history/last-seen?class=car')).body;
      assert.equal(car.seen, true);
      assert.equal(car.device_id, 'cam-a');
      assert.ok(Date.parse(car.at) >= t0);
      const knife = (await api(hub.url, '/fleet/history/last-seen?class=knife')).body;
      assert.equal(knife.seen, false);

      const incidents = (await api(hub.url, `/fleet/history/events?target=cam-a&kind=event&${span}`)).body.events;
      assert.deepEqual(
        incidents.map((e: any) => [e.name, e.body.message]),
        [['incident', 'person at the gate']],
      );
      const ocr = (await api(hub.url, `/fleet/history/events?target=cam-a&kind=ocr&${span}`)).body.events;
      assert.equal(ocr.length, 1);
      assert.equal(ocr[0].track_id, 42);
      const chunks = (await api(hub.url, `/fleet/history/events?target=cam-a&kind=chunk&${span}`)).body.events;
      assert.deepEqual(
        chunks.map((e: any) => e.name),
        ['20261127T000000Z_1.h265'],
      );
      const presence = (await api(hub.url, `/fleet/history/events?target=cam-a&kind=presence&${span}`)).body.events;
      assert.deepEqual(
        presence.map((e: any) => e.name),
        ['online'],
      );

      const tools = (await mcp.listTools()).tools.map((t) => t.name);
      for (const name of ['history_people_seen', 'history_last_seen', 'history_incidents', 'history_ocr_reads']) assert.ok(tools.includes(name), name);
      const [from, to] = span.split('&').map((p) => new Date(Number(p.split('=')[1])).toISOString());
      const people = await mcp.callTool({ name: 'history_people_seen', arguments: { target: 'cam-a', from, to } });
      assert.equal(people.isError ?? false, false, JSON.stringify(people.content));
      const s = people.structuredContent as any;
      assert.equal(s.person_max, EXPECTED.person_max);
      assert.equal(s.unique_person_tracks, EXPECTED.unique_person_tracks);
      assert.deepEqual(s.sources, { devices: ['cam-a'], from, to, kind: 'history' });
      const last = (await mcp.callTool({ name: 'history_last_seen', arguments: { class: 'person' } })).structuredContent as any;
      assert.equal(last.seen, true);
      const inc = (await mcp.callTool({ name: 'history_incidents', arguments: { target: 'camera', from, to } })).structuredContent as any;
      assert.equal(inc.events.length, 1);
      assert.deepEqual(inc.sources.devices, ['cam-a', 'cam-b']);
      const reads = (await mcp.callTool({ name: 'history_ocr_reads', arguments: { target: 'cam-a', from, to } })).structuredContent as any;
      assert.equal(reads.events[0].track_id, 42);
    } finally {
      await mcp.close();
      await hub.close();
    }
  });

  it('refuses bad input with typed errors', async () => {
    const hub = await testHub({ dataDir, env: FAST });
    try {
      const bad = await api(hub.url, '/fleet/history/people?target=cam-a&from=yesterday');
      assert.equal(bad.status, 400);
      const reversed = await api(hub.url, '/fleet/history/people?target=cam-a&from=2000&to=1000');
      assert.equal(reversed.status, 400);
      assert.equal(reversed.body.error.code, 'bad_request');
      const unknown = await api(hub.url, '/fleet/history/people?target=nobody');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error.code, 'target_unknown');
      const cls = await api(hub.url, '/fleet/history/last-seen?class=unicorn');
      assert.equal(cls.body.error.code, 'bad_request');
    } finally {
      await hub.close();
    }
  });

  it('drops what is past the retention when the hub starts', async () => {
    // About 0.09 s of retention: everything published in before() is older than that.
    const hub = await testHub({ dataDir, env: { ...FAST, LOOKOUT_HISTORY_RETENTION_DAYS: '0.000001' } });
    try {
      const a = (await api(hub.url, `/fleet/history/people?target=cam-a&${span}`)).body;
      assert.equal(a.frames, 0);
      assert.equal(a.person_max, 0);
      const chunks = (await api(hub.url, `/fleet/history/events?target=cam-a&kind=chunk&${span}`)).body.events;
      assert.equal(chunks.length, 0);
    } finally {
      await hub.close();
    }
  });
});
