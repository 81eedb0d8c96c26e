import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IngestedMessage } from '../../../../../hub/plugins/bus-cache/src/service.js';
import { MINUTE_MS, MinuteAggregator } from '../../../../../hub/plugins/fleet-history/src/minute-aggregator.js';

const M0 = Date.parse('2026-11-24T10:00:00.000Z');

function dets(deviceId: string, at: number, classes: number[]): IngestedMessage {
  const message = {
    timestamp: new Date(at).toISOString(),
    dets: classes.map((c, i) => ({ c, p: 0.9, b: [0, 0, 1, 1], track_id: i })),
    person_count: classes.filter((c) => c === 0).length,
  };
  return { topic: `devices/${deviceId}/dets`, deviceId, suffix: 'dets', key: 'dets', message, receivedAt: at, retain: false };
}

/** The aggregator keeps each device's row of its current minute at hand: the row must still be that of the message's minute. */
describe('MinuteAggregator: each message folds into the row of its device and minute', () => {
  it('a late message (one that waited for its device) goes to its own minute, and a drain starts new rows', () => {
    const a = new MinuteAggregator();
    a.add(dets('cam-1', M0 + 1_000, [0, 0, 2]));
    a.add(dets('cam-2', M0 + 1_500, [0]));
    a.add(dets('cam-1', M0 + MINUTE_MS + 10, [0]));
    a.add(dets('cam-1', M0 + 2_000, [2]));
    const { minutes } = a.drain();
    const row = (id: string, minute: number) => minutes.find((r) => r.deviceId === id && r.minute === minute);
    assert.equal(minutes.length, 3);
    assert.equal(row('cam-1', M0)?.frames, 2);
    assert.equal(row('cam-1', M0)?.personMax, 2);
    assert.deepEqual(row('cam-1', M0)?.classes[2], { max: 1, sum: 2, tracks: [2, 0] });
    assert.deepEqual(row('cam-1', M0)?.classes[0], { max: 2, sum: 2, tracks: [0, 1] });
    assert.equal(row('cam-1', M0 + MINUTE_MS)?.frames, 1);
    assert.equal(row('cam-2', M0)?.frames, 1);

    a.add(dets('cam-1', M0 + MINUTE_MS + 20, [0]));
    const after = a.drain().minutes;
    assert.equal(after.length, 1, 'what was drained is not folded into again');
    assert.equal(after[0].frames, 1);
    assert.equal(after[0].minute, M0 + MINUTE_MS);
  });
});
