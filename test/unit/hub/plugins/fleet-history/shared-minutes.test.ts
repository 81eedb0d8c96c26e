/**
 * Hub replicas that divide the apply: each folds the dets of the devices it owns into minute rows
 * and shares them; the others merge those rows instead of folding the dets they applied (a few of
 * them). The store of each ends with the rows one hub folding every dets would have.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DividedApply } from 'lookout/hub';
import type { IngestedMessage } from '../../../../../hub/plugins/bus-cache/src/service.js';
import { MinuteAggregator } from '../../../../../hub/plugins/fleet-history/src/minute-aggregator.js';
import { MINUTES_CHANNEL, ROWS_PER_RECORD, shareMinutes, sharedMinutesOf } from '../../../../../hub/plugins/fleet-history/src/shared-minutes.js';
import { MAX_TRACKS_PER_MINUTE, mergeMinutes } from '../../../../../hub/plugins/fleet-history/src/sqlite-history-store.js';
import type { MinuteRow } from '../../../../../hub/plugins/fleet-history/src/service.js';

const M0 = Date.parse('2026-11-27T10:00:00.000Z');

function dets(deviceId: string, at: number, classes: number[]): IngestedMessage {
  const message = {
    timestamp: new Date(at).toISOString(),
    dets: classes.map((c, i) => ({ c, p: 0.9, b: [0, 0, 1, 1], track_id: at % 7 === 0 ? i + 10 : i })),
    person_count: classes.filter((c) => c === 0).length,
  };
  return { topic: `devices/${deviceId}/dets`, deviceId, suffix: 'dets', key: 'dets', message, receivedAt: at, retain: false };
}

function status(deviceId: string, at: number, thermal: string): IngestedMessage {
  const message = { timestamp: new Date(at).toISOString(), state: 'online', thermal_state: thermal };
  return { topic: `devices/${deviceId}/status`, deviceId, suffix: 'status', key: 'status', message, receivedAt: at, retain: false };
}

/** The owner of `mine`: what it folds (the relay marks the others' dets foreign) and the records it publishes, as the stream carries them (JSON). */
function replica(mine: Set<string>) {
  const published: unknown[] = [];
  const divided: DividedApply = {
    publish: (channel, value) => {
      assert.equal(channel, MINUTES_CHANNEL);
      published.push(JSON.parse(JSON.stringify(value)));
    },
    onRecord: () => () => undefined,
  };
  const folder = new MinuteAggregator();
  const aggregator = { add: (m: IngestedMessage) => folder.add({ ...m, foreign: m.key === 'dets' && !mine.has(m.deviceId) }), drain: () => folder.drain() };
  /** What its store was given: its own rows at each flush, and the others' it took. */
  const rows: MinuteRow[] = [];
  const flush = () => {
    const { minutes } = aggregator.drain();
    shareMinutes(divided, minutes);
    rows.push(...minutes);
  };
  const take = (records: unknown[]) => {
    for (const record of records) {
      const shared = sharedMinutesOf(record);
      assert.equal(shared.skipped, 0);
      rows.push(...shared.rows);
    }
  };
  return { divided, published, aggregator, rows, flush, take };
}

/** Rows merged per device and minute, as the store merges what it is given. */
function stored(rows: MinuteRow[]): Map<string, MinuteRow> {
  const out = new Map<string, MinuteRow>();
  for (const r of rows) {
    const key = `${r.deviceId} ${r.minute}`;
    const old = out.get(key);
    out.set(key, old ? mergeMinutes(old, r) : r);
  }
  return out;
}

describe('fleet history rows shared between replicas that divide the apply', () => {
  it('each replica folds only its own devices’ dets, shares their rows, and with the others’ ends with what one hub folding everything has', () => {
    const messages: IngestedMessage[] = [];
    for (let i = 0; i < 40; i++) {
      messages.push(dets('cam-a', M0 + i * 1_700, i % 3 === 0 ? [0, 0, 2] : [0]));
      messages.push(dets('cam-b', M0 + i * 1_900, i % 4 === 0 ? [0, 1] : []));
      if (i % 10 === 0) messages.push(status('cam-a', M0 + i * 1_700 + 1, i < 20 ? 'NORMAL' : 'HOT'), status('cam-b', M0 + i * 1_900 + 1, 'NORMAL'));
    }
    const one = new MinuteAggregator();
    const a = replica(new Set(['cam-a']));
    const b = replica(new Set(['cam-b']));
    // Each applies every status, and (in this test) every dets too: the ones it does not own are not folded.
    for (const [n, m] of messages.entries()) {
      one.add(m);
      a.aggregator.add(m);
      b.aggregator.add(m);
      if (n % 25 === 24) for (const r of [a, b]) r.flush();
    }
    for (const r of [a, b]) r.flush();
    a.take(b.published);
    b.take(a.published);
    const expected = stored(one.drain().minutes);
    for (const [name, rows] of [
      ['a', a.rows],
      ['b', b.rows],
    ] as const) {
      const got = stored(rows);
      assert.deepEqual([...got.keys()].sort(), [...expected.keys()].sort(), `${name}: the same device-minutes`);
      for (const [key, row] of expected) {
        const mine = got.get(key)!;
        assert.deepEqual(
          { ...mine, classes: sortedTracks(mine.classes) },
          { ...row, classes: sortedTracks(row.classes) },
          `${name}: ${key} as one hub folds it (thermal state from its own statuses)`,
        );
      }
    }
  });

  it('shares only the dets part of the rows it folded dets into, whoever owns the device by the time it flushes', () => {
    const mine = new Set(['cam-a']);
    const r = replica(mine);
    r.aggregator.add(status('cam-a', M0, 'HOT'));
    r.aggregator.add(dets('cam-a', M0 + 10, [0]));
    r.aggregator.add(dets('cam-b', M0 + 20, [0]));
    r.aggregator.add(status('cam-c', M0, 'HOT'));
    // cam-a moved to another replica before the flush: what was folded here is shared all the same.
    mine.delete('cam-a');
    shareMinutes(r.divided, r.aggregator.drain().minutes);
    assert.equal(r.published.length, 1);
    const shared = sharedMinutesOf(r.published[0]);
    assert.deepEqual(
      shared.rows.map((x) => [x.deviceId, x.frames, x.thermalState, x.storageHealth, x.suspended]),
      [['cam-a', 1, null, null, false]],
    );
    shareMinutes(r.divided, []);
    assert.equal(r.published.length, 1, 'nothing to share: no record');
  });

  it('a large flush goes in records of ROWS_PER_RECORD rows', () => {
    const r = replica(new Set(Array.from({ length: 2500 }, (_, i) => `cam-${i}`)));
    for (let i = 0; i < 2500; i++) r.aggregator.add(dets(`cam-${i}`, M0 + i, [0]));
    shareMinutes(r.divided, r.aggregator.drain().minutes);
    assert.deepEqual(
      r.published.map((p) => sharedMinutesOf(p).rows.length),
      [ROWS_PER_RECORD, ROWS_PER_RECORD, 500],
    );
  });

  it('a row that is not one is skipped alone and counted; a record that is not one is one skipped', () => {
    const good = { deviceId: 'cam-a', minute: M0, frames: 1, personMax: 1, personSum: 1, classes: { 0: { max: 1, sum: 1, tracks: [1] } }, lastSeen: { 0: M0 } };
    assert.deepEqual(sharedMinutesOf({ minutes: [good] }).skipped, 0);
    assert.equal(
      sharedMinutesOf({ minutes: [{ ...good, deviceId: 'x'.repeat(300), classes: { '12345678901234567': { max: 1, sum: 1, tracks: [] } } }] }).skipped,
      0,
      'ids as the contracts allow them',
    );
    for (const bad of [
      { ...good, frames: -1 },
      { ...good, frames: '1' },
      { ...good, deviceId: '' },
      { ...good, deviceId: 'x'.repeat(600) },
      { ...good, minute: 'now' },
      { ...good, classes: { 0: { max: 1, sum: 1, tracks: new Array(MAX_TRACKS_PER_MINUTE + 1).fill(1) } } },
      { ...good, classes: { 0: { max: 1, sum: 1, tracks: [0.5] } } },
      { ...good, lastSeen: { 0: null } },
      null,
    ]) {
      const r = sharedMinutesOf({ minutes: [good, bad, good] });
      assert.deepEqual([r.rows.length, r.skipped], [2, 1], JSON.stringify(bad)?.slice(0, 80));
    }
    for (const bad of [null, 'rows', { minutes: 'x' }]) assert.deepEqual(sharedMinutesOf(bad), { rows: [], skipped: 1 });
  });
});

function sortedTracks(classes: MinuteRow['classes']): MinuteRow['classes'] {
  return Object.fromEntries(Object.entries(classes).map(([c, v]) => [c, { ...v, tracks: [...v.tracks].sort((x, y) => x - y) }]));
}
