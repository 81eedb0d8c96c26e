import assert from 'node:assert/strict';
import { open, readdir, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Outbox } from '../../../../lib/mqtt/outbox.js';
import { scratchDir } from '../../../support/scratch-dir.js';

/** Takes and acknowledges everything waiting, in order, as a broker would. */
function drain(outbox: Outbox): string[] {
  const got: string[] = [];
  for (let m = outbox.take(); m; m = outbox.take()) {
    got.push(m.payload.toString());
    outbox.delivered(m);
  }
  return got;
}

const put = (outbox: Outbox, from: number, to: number) => {
  for (let i = from; i < to; i++) outbox.put('devices/cam/dets', Buffer.from(`m${i}`), 1);
};
const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `m${from + i}`);

describe('Outbox (QoS 1 messages kept for the broker)', () => {
  it('drops the oldest first at the count bound and counts them', async () => {
    const { dir, cleanup } = await scratchDir();
    const outbox = await Outbox.open({ dir, maxMessages: 5, flushMs: 60_000 });
    try {
      put(outbox, 0, 12);
      const s = outbox.stats();
      assert.deepEqual([s.queued, s.kept, s.dropped], [5, 12, 7]);
      assert.deepEqual(drain(outbox), names(7, 12), 'the newest five remain, in order');
      assert.deepEqual([outbox.stats().delivered, outbox.stats().queued, outbox.stats().queued_bytes], [5, 0, 0]);
    } finally {
      await outbox.close();
      await cleanup();
    }
  });

  it('drops the oldest first at the byte bound', async () => {
    const { dir, cleanup } = await scratchDir();
    // Each record: 8 header + 12 + 16 topic + 2..3 payload bytes, about 38: 200 bytes hold five.
    const outbox = await Outbox.open({ dir, maxBytes: 200, flushMs: 60_000 });
    try {
      put(outbox, 0, 10);
      const s = outbox.stats();
      assert.ok(s.queued_bytes <= 200, `${s.queued_bytes} bytes held`);
      assert.equal(s.dropped + s.queued, 10);
      assert.ok(s.dropped > 0);
      assert.deepEqual(drain(outbox), names(s.dropped, 10));
    } finally {
      await outbox.close();
      await cleanup();
    }
  });

  it('keeps what was not delivered across a restart, and nothing that was', async () => {
    const { dir, cleanup } = await scratchDir();
    try {
      const first = await Outbox.open({ dir, flushMs: 60_000 });
      put(first, 0, 10);
      const three = [first.take()!, first.take()!, first.take()!];
      for (const m of three) first.delivered(m);
      first.take(); // m3 in flight when the process stops: kept, at least once
      await first.close();

      const second = await Outbox.open({ dir, flushMs: 60_000 });
      assert.deepEqual([second.stats().recovered, second.stats().torn], [7, 0]);
      put(second, 10, 12);
      assert.deepEqual(drain(second), names(3, 12), 'the undelivered ones first, in order, then the new ones');
      await second.flush();
      assert.deepEqual(await readdir(dir), [], 'segments go once everything in them is delivered');
      await second.close();

      const third = await Outbox.open({ dir, flushMs: 60_000 });
      assert.equal(third.stats().recovered, 0);
      await third.close();
    } finally {
      await cleanup();
    }
  });

  it('a torn last record (a crash mid-write) is skipped and the records before it are kept', async () => {
    const { dir, cleanup } = await scratchDir();
    try {
      const first = await Outbox.open({ dir, flushMs: 60_000 });
      put(first, 0, 6);
      await first.flush(); // written and synced, as the timer does
      // The process dies here: no close. A seventh record was being written when it did.
      const [segment] = await readdir(dir);
      const path = join(dir, segment);
      const whole = (await stat(path)).size;
      put(first, 6, 7);
      await first.flush();
      await first.close(); // nothing more to write: the files are as a crash right now would leave them
      await truncate(path, whole + 20); // the seventh record cut short

      const second = await Outbox.open({ dir, flushMs: 60_000 });
      assert.deepEqual([second.stats().recovered, second.stats().torn], [6, 1]);
      assert.deepEqual(drain(second), names(0, 6));
      await second.close();
    } finally {
      await cleanup();
    }
  });

  it('a record whose bytes changed is skipped with what follows it in its segment, later segments are read', async () => {
    const { dir, cleanup } = await scratchDir();
    try {
      const first = await Outbox.open({ dir, flushMs: 60_000, segmentBytes: 1 });
      put(first, 0, 2);
      await first.flush(); // segment 0: m0, m1 (then it is full)
      put(first, 2, 4);
      await first.flush(); // segment 1: m2, m3
      await first.close();
      const segments = (await readdir(dir)).sort();
      assert.equal(segments.length, 2);
      // Flip the last payload byte of segment 0 (m1): its checksum no longer matches.
      const handle = await open(join(dir, segments[0]), 'r+');
      const size = (await handle.stat()).size;
      const byte = Buffer.alloc(1);
      await handle.read(byte, 0, 1, size - 1 - 17); // before the trailing done record (17 bytes)
      byte[0] = byte[0] ^ 0xff;
      await handle.write(byte, 0, 1, size - 1 - 17);
      await handle.close();

      const second = await Outbox.open({ dir, flushMs: 60_000 });
      assert.equal(second.stats().torn, 1);
      assert.deepEqual(drain(second), ['m0', 'm2', 'm3']);
      await second.close();
    } finally {
      await cleanup();
    }
  });

  it('a message the broker acknowledged before the flush never touches the disk', async () => {
    const { dir, cleanup } = await scratchDir();
    const outbox = await Outbox.open({ dir, flushMs: 60_000 });
    try {
      put(outbox, 0, 50);
      drain(outbox);
      await outbox.flush();
      assert.deepEqual([outbox.stats().written, (await readdir(dir)).length], [0, 0]);
    } finally {
      await outbox.close();
      await cleanup();
    }
  });

  it('refuses bounds that are not positive integers', async () => {
    const { dir, cleanup } = await scratchDir();
    try {
      await assert.rejects(Outbox.open({ dir, maxMessages: 0 }), /maxMessages must be a positive integer/);
      await assert.rejects(Outbox.open({ dir, maxBytes: 1.5 }), /maxBytes must be a positive integer/);
    } finally {
      await cleanup();
    }
  });
});
