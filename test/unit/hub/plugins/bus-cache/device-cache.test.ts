import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceCache, sameJson } from '../../../../../hub/plugins/bus-cache/src/device-cache.js';

const limits = { maxTopics: 8, maxAlerts: 3, maxChunks: 5 };
const iso = (ms: number) => new Date(ms).toISOString();
const T0 = Date.parse('2026-11-24T10:00:00.000Z');

/** Hub replicas may apply one device's messages in different orders (one taken while Redis was down arrives late). */
describe('DeviceCache: the same state whatever order messages are applied in', () => {
  it('the message received last stays the latest; an older one is counted, not stored', () => {
    const t0 = T0;
    const inOrder = new DeviceCache('cam-1', limits);
    const late = new DeviceCache('cam-1', limits);
    const m1 = { timestamp: iso(t0), seq: 1 };
    const m2 = { timestamp: iso(t0 + 100), seq: 2 };
    inOrder.store('telemetry', m1, t0, false, t0);
    inOrder.store('telemetry', m2, t0 + 100, false, t0 + 100);
    assert.equal(inOrder.wasOlder, false);
    late.store('telemetry', m2, t0 + 100, false, t0 + 100);
    late.store('telemetry', m1, t0, false, t0);
    assert.equal(late.wasOlder, true);
    for (const d of [inOrder, late]) {
      const { stamp: _stamp, ...latest } = d.latest.get('telemetry')!;
      assert.deepEqual(latest, { message: m2, receivedAt: t0 + 100, retain: false, count: 2 });
      assert.equal(d.newestAt, t0 + 100);
    }
  });

  it('by the device’s own stamps: a late arrival received after a newer one stays behind it; a clock reset is new', () => {
    const d = new DeviceCache('cam-1', limits);
    const newer = { timestamp: iso(T0 + 1_000), seq: 2 };
    const late = { timestamp: iso(T0), seq: 1 };
    d.store('telemetry', newer, T0 + 1_000, false, T0 + 1_000);
    d.store('telemetry', late, T0 + 5_000, false, T0 + 5_000);
    assert.equal(d.wasOlder, true, 'taken later by another replica, but older');
    assert.equal(d.latest.get('telemetry')?.message, newer);
    const rebooted = { timestamp: '1970-01-01T00:00:05.000Z', seq: 3 };
    d.store('telemetry', rebooted, T0 + 6_000, false, T0 + 6_000);
    assert.equal(d.wasOlder, false, 'a stamp far behind is a clock that was reset, not a late message');
    assert.equal(d.latest.get('telemetry')?.message, rebooted);
  });

  it('alerts are listed newest first by receipt, whichever was added first', () => {
    const a = new DeviceCache('cam-1', limits);
    const b = new DeviceCache('cam-1', limits);
    const alerts = [1, 2, 3, 4].map((n) => ({ type: 'incident', n, received_at: iso(Date.parse('2026-11-24T10:00:00.000Z') + n * 1000) }));
    for (const x of alerts) a.addAlert(x);
    for (const x of [alerts[2], alerts[0], alerts[3], alerts[1]]) b.addAlert(x);
    assert.deepEqual(
      a.anomalyAlerts.map((x) => x.n),
      [4, 3, 2],
    );
    assert.deepEqual(b.anomalyAlerts, a.anomalyAlerts);
  });
});

/** A redelivery is told by comparing the two parsed messages: the walk must agree with comparing their JSON texts. */
describe('DeviceCache: a redelivery is the same JSON, told without serialising', () => {
  const dets = (box: number[], extra: Record<string, unknown> = {}) => ({
    timestamp: iso(T0),
    dets: [{ c: 0, p: 0.9, b: box, track_id: 1, ...extra }],
    person_count: 1,
    meta: null,
  });
  const pairs: [unknown, unknown][] = [
    [dets([1, 2, 3, 4]), dets([1, 2, 3, 4])],
    [dets([1, 2, 3, 4]), dets([1, 2, 3, 5])],
    [dets([1, 2, 3, 4]), dets([1, 2, 3])],
    [dets([1, 2, 3, 4]), dets([1, 2, 3, 4], { lane: 'a' })],
    [
      { a: 1, b: 2 },
      { b: 2, a: 1 },
    ],
    [{ a: [] }, { a: {} }],
    [{ a: null }, { a: {} }],
    [{ a: '1' }, { a: 1 }],
    [{ a: [{ x: [true] }] }, { a: [{ x: [true] }] }],
    [{ a: [{ x: [true] }] }, { a: [{ x: [false] }] }],
    [
      { 2: 'x', 1: 'y' },
      { 1: 'y', 2: 'x' },
    ],
    [[], {}],
    [0, -0],
    [
      { d: { x: 1 }, seq: 1 },
      { d: { x: 2 }, seq: 1 },
    ],
    [
      { d: { x: 1 }, seq: 1 },
      { d: { x: 1 }, seq: 2 },
    ],
    [
      { d: { x: 1 }, seq: 1 },
      { d: { x: 1 }, seq: 1 },
    ],
    [
      { d: null, seq: 1 },
      { d: { x: 1 }, seq: 1 },
    ],
  ];
  it('agrees with JSON.stringify(a) === JSON.stringify(b) on every pair', () => {
    for (const [a, b] of pairs) assert.equal(sameJson(a, b), JSON.stringify(a) === JSON.stringify(b), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  });

  it('counts a message of the same stamp that differs deep inside as a new one, and the same one again not', () => {
    const d = new DeviceCache('cam-1', limits);
    d.store('dets', dets([1, 2, 3, 4]), T0, false, T0);
    d.store('dets', dets([1, 2, 3, 4]), T0 + 1, false, T0 + 1);
    assert.equal(d.latest.get('dets')?.count, 1, 'the same message again (a QoS 1 redelivery) is not a new one');
    d.store('dets', dets([1, 2, 3, 5]), T0 + 2, false, T0 + 2);
    assert.equal(d.latest.get('dets')?.count, 2, 'same stamp, one box coordinate differs: a new message');
    assert.deepEqual(d.latest.get('dets')?.message, dets([1, 2, 3, 5]));
  });
});
