import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { BusCache, IngestedMessage } from '../../../../../hub/plugins/bus-cache/src/service.js';
import { HISTORY_WRITE_SLICE, HistoryRecorder } from '../../../../../hub/plugins/fleet-history/src/history-recorder.js';
import type { HistoryEvent, MinuteRow } from '../../../../../hub/plugins/fleet-history/src/service.js';
import { SqliteHistoryStore } from '../../../../../hub/plugins/fleet-history/src/sqlite-history-store.js';

/** The one thing the recorder asks of the bus cache: its ingest, message by message. */
function ingestSource(): { cache: BusCache; send: (m: IngestedMessage) => void } {
  let listener: ((m: IngestedMessage) => void) | undefined;
  const cache = {
    on: (_key: string, l: (m: IngestedMessage) => void) => {
      listener = l;
      return () => (listener = undefined);
    },
  } as unknown as BusCache;
  return { cache, send: (m) => listener?.(m) };
}

describe('HistoryRecorder', () => {
  it('writes a flush of a thousand devices in slices of HISTORY_WRITE_SLICE rows, one per turn, and every row lands', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-recorder-'));
    const store = new SqliteHistoryStore(join(dir, 'history.sqlite'));
    // The real store, its transactions noted: one transaction of the whole fleet held the hub's loop up every flush.
    const writes: number[] = [];
    const write = store.write.bind(store);
    store.write = (minutes: MinuteRow[], events: HistoryEvent[]) => {
      writes.push(minutes.length + events.length);
      write(minutes, events);
    };
    const { cache, send } = ingestSource();
    const now = Date.now();
    const recorder = new HistoryRecorder(cache, store, {
      flushMs: 3_600_000,
      trimMs: 3_600_000,
      retentionDays: 30,
      maxBytes: 1e9,
      now: () => now,
      warn: () => undefined,
    });
    try {
      const ids = Array.from({ length: 1000 }, (_, i) => `cam-${i}`);
      for (const id of ids) {
        const message = { timestamp: new Date(now).toISOString(), camera_id: 'front_door', dets: [{ c: 0, p: 0.8, b: [1, 2, 3, 4] }], person_count: 1 };
        send({ topic: `devices/${id}/dets`, deviceId: id, suffix: 'dets', key: 'dets', message, receivedAt: now, retain: false });
      }
      recorder.flush();
      assert.equal(writes.length, 1, 'one slice in the flush\u2019s own turn');
      await new Promise<void>((resolve) => {
        const wait = () => (writes.reduce((a, b) => a + b, 0) >= ids.length ? resolve() : setImmediate(wait));
        wait();
      });
      assert.ok(
        writes.every((n) => n <= HISTORY_WRITE_SLICE),
        `transactions of ${writes.join(', ')} rows`,
      );
      assert.equal(store.minutes(ids, now - 120_000, now + 120_000).length, ids.length);
    } finally {
      recorder.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes whatever is left at stop, at once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'history-recorder-'));
    const store = new SqliteHistoryStore(join(dir, 'history.sqlite'));
    const { cache, send } = ingestSource();
    const now = Date.now();
    const recorder = new HistoryRecorder(cache, store, {
      flushMs: 3_600_000,
      trimMs: 3_600_000,
      retentionDays: 30,
      maxBytes: 1e9,
      now: () => now,
      warn: () => undefined,
    });
    const ids = Array.from({ length: 250 }, (_, i) => `cam-${i}`);
    for (const id of ids) {
      const message = { timestamp: new Date(now).toISOString(), camera_id: 'front_door', dets: [], person_count: 0 };
      send({ topic: `devices/${id}/dets`, deviceId: id, suffix: 'dets', key: 'dets', message, receivedAt: now, retain: false });
    }
    recorder.flush();
    recorder.stop();
    const reopened = new SqliteHistoryStore(join(dir, 'history.sqlite'));
    try {
      assert.equal(reopened.minutes(ids, now - 120_000, now + 120_000).length, ids.length);
    } finally {
      reopened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
