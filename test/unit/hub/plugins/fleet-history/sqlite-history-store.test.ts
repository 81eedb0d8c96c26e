import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { MinuteRow } from '../../../../../hub/plugins/fleet-history/src/service.js';
import { SqliteHistoryStore } from '../../../../../hub/plugins/fleet-history/src/sqlite-history-store.js';

const DAY = 86_400_000;

function minute(deviceId: string, at: number, persons: number, tracks: number[]): MinuteRow {
  return {
    deviceId,
    minute: at,
    frames: 1,
    personMax: persons,
    personSum: persons,
    classes: { 0: { max: persons, sum: persons, tracks } },
    lastSeen: { 0: at },
    thermalState: 'NORMAL',
    suspended: false,
    storageHealth: 'OK',
  };
}

describe('SqliteHistoryStore', () => {
  let dir: string;
  let store: SqliteHistoryStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'history-store-'));
    store = new SqliteHistoryStore(join(dir, 'h.sqlite'));
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds up a minute written in two flushes: frames and sums add, the max is the larger, track ids union', () => {
    store.write([minute('cam', 0, 2, [1, 2])], []);
    store.write([{ ...minute('cam', 0, 3, [2, 3]), suspended: true }], []);
    const [row] = store.minutes(['cam'], 0, 60_000);
    assert.equal(row.frames, 2);
    assert.equal(row.personMax, 3);
    assert.equal(row.personSum, 5);
    assert.deepEqual([...row.classes[0].tracks].sort(), [1, 2, 3]);
    assert.equal(row.suspended, true);
  });

  it('drops minutes and events past the retention, and the oldest days while over the size bound', () => {
    const tracks = Array.from({ length: 200 }, (_, i) => i);
    for (let day = 0; day < 10; day++) {
      const rows = Array.from({ length: 60 }, (_, m) => minute('cam', day * DAY + m * 60_000, 1, tracks));
      store.write(rows, [{ deviceId: 'cam', at: day * DAY, kind: 'event', name: 'incident', trackId: null, body: { day } }]);
    }
    assert.equal(store.trim(DAY, Number.MAX_SAFE_INTEGER), 60 + 1 + 0, 'day 0 is past the retention');
    assert.equal(store.usage().oldest, DAY);
    const full = store.usage().bytes;
    const dropped = store.trim(0, Math.floor(full / 2));
    assert.ok(dropped > 0);
    const after = store.usage();
    assert.ok(after.bytes <= full / 2, `${after.bytes} ≤ ${full / 2}`);
    assert.ok(after.oldest! > DAY, 'the oldest days went first');
    assert.equal(store.minutes(['cam'], 9 * DAY, 10 * DAY).length, 60, 'the newest day stays');
    assert.equal(store.lastSeen(['cam'], 0)?.at, 9 * DAY + 59 * 60_000);
  });
});
