import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { IngestedMessage } from '../../../../../hub/plugins/bus-cache/src/service.js';
import { MINUTE_MS, MinuteAggregator } from '../../../../../hub/plugins/fleet-history/src/minute-aggregator.js';
import { MAX_TRACKS_PER_MINUTE } from '../../../../../hub/plugins/fleet-history/src/sqlite-history-store.js';

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

  it('keeps each track of a minute once, in order of first sight, up to MAX_TRACKS_PER_MINUTE', () => {
    const a = new MinuteAggregator();
    const withTracks = (ids: number[]): IngestedMessage => {
      const m = dets('cam-1', M0 + 1_000, []);
      m.message = { ...m.message, dets: ids.map((track_id) => ({ c: 0, p: 0.9, b: [0, 0, 1, 1], track_id })), person_count: ids.length };
      return m;
    };
    a.add(withTracks([7, 3, 7]));
    a.add(withTracks([3, 9]));
    for (let i = 0; i < MAX_TRACKS_PER_MINUTE + 50; i += 10) a.add(withTracks(Array.from({ length: 10 }, (_, k) => 1000 + i + k)));
    a.add(withTracks([7, 5]));
    const [row] = a.drain().minutes;
    const tracks = row.classes[0].tracks;
    assert.equal(tracks.length, MAX_TRACKS_PER_MINUTE);
    assert.deepEqual(tracks.slice(0, 4), [7, 3, 9, 1000]);
    assert.equal(new Set(tracks).size, tracks.length, 'no track twice');
    assert.equal(tracks.includes(5), false, 'a new track past the bound is not kept');
  });
});
