import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceCache } from '../../../../../hub/plugins/bus-cache/src/device-cache.js';

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
