import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { MemoryDebugRing } from '../../../../../hub/plugins/debug-ring/src/debug-ring.js';
import { RingBuffer } from '../../../../../hub/plugins/debug-ring/src/ring-buffer.js';

describe('debug ring', () => {
  it('keeps the newest items up to its capacity', () => {
    const r = new RingBuffer<number>(3);
    for (let i = 1; i <= 5; i++) r.push(i);
    assert.deepEqual(r.toArray(), [3, 4, 5]);
    assert.equal(r.dropped, 2);
    assert.throws(() => new RingBuffer(0), RangeError);
  });

  it('keeps failures apart from the ingest flood and merges them in order', () => {
    let t = 1000;
    const ring = new MemoryDebugRing(3, { now: () => t++ });
    ring.record({ kind: 'tool_error', device_id: 'a', message: 'first failure' });
    for (let i = 0; i < 10; i++) ring.record({ kind: 'ingest', device_id: 'a', topic: 'devices/a/dets', message: 'dets' });
    ring.record({ kind: 'snapshot_fail', device_id: 'b', message: 'no jpeg' });
    const page = ring.query({ limit: 100 });
    assert.deepEqual(
      page.events.map((e) => e.kind),
      ['tool_error', 'ingest', 'ingest', 'ingest', 'snapshot_fail'],
    );
    assert.deepEqual(
      page.events.map((e) => e.seq),
      [...page.events.map((e) => e.seq)].sort((x, y) => x - y),
    );
    assert.equal(page.dropped, 7);
    assert.equal(page.held, 5);
  });

  it('filters by kind, device, since and limit', () => {
    let t = 0;
    const ring = new MemoryDebugRing(50, { now: () => (t += 1000) });
    for (let i = 0; i < 10; i++) ring.record({ kind: i % 2 ? 'tool_call' : 'ingest', device_id: i < 5 ? 'a' : 'b', message: String(i) });
    assert.deepEqual(
      ring.query({ limit: 100, kinds: ['tool_call'] }).events.map((e) => e.message),
      ['1', '3', '5', '7', '9'],
    );
    assert.deepEqual(
      ring.query({ limit: 100, device: 'b', kinds: ['ingest'] }).events.map((e) => e.message),
      ['6', '8'],
    );
    assert.deepEqual(
      ring.query({ limit: 100, sinceMs: 7000 }).events.map((e) => e.message),
      ['7', '8', '9'],
    );
    const last = ring.query({ limit: 2 });
    assert.deepEqual(
      last.events.map((e) => e.message),
      ['8', '9'],
    );
    assert.equal(last.matched, 10);
    assert.match(last.events[0].timestamp, /^\d{4}-\d\d-\d\dT/);
  });

  it('knows the spec\u2019s kinds and the hub\u2019s', () => {
    const ring = new MemoryDebugRing(10);
    for (const k of ['live/warm_ready', 'snapshot_fail', 'ssh_jpeg_fail', 'shadow', 'recorder_status', 'ingest', 'ingest_invalid', 'tool_call', 'tool_error'])
      assert.ok(ring.kinds().includes(k), k);
  });

  it('drops the oldest items of a weighted ring once the weight bound is passed', () => {
    const r = new RingBuffer<string>(100, 10);
    for (const [item, w] of [
      ['a', 4],
      ['b', 4],
      ['c', 4],
      ['d', 9],
    ] as const)
      r.push(item, w);
    assert.deepEqual(r.toArray(), ['d']);
    assert.equal(r.held, 9);
    assert.equal(r.dropped, 3);
    r.push('e', 1);
    assert.deepEqual(r.toArray(), ['d', 'e']);
  });

  it('stays within its byte bound when flooded with events of 256 KiB', () => {
    const maxBytes = 1024 * 1024;
    const ring = new MemoryDebugRing(2000, { maxBytes, maxEventBytes: 300 * 1024 });
    const big = (i: number) => ({ storage: { junk: randomBytes(192 * 1024).toString('base64') }, i });
    for (let i = 0; i < 2000; i++) ring.record({ kind: 'recorder_status', device_id: 'cam-1', message: `event ${i}`, details: big(i) });
    const page = ring.query({ limit: 10_000 });
    assert.ok(page.bytes <= maxBytes, `${page.bytes} bytes held, bound ${maxBytes}`);
    assert.ok(page.held >= 3 && page.held <= 4, `held ${page.held}`);
    assert.equal(page.dropped, 2000 - page.held);
    // The newest survive, whole.
    assert.equal(page.events.at(-1)?.message, 'event 1999');
    assert.equal((page.events.at(-1)?.details as { i: number }).i, 1999);
  });

  it('cuts one event down to its own bound, keeping a preview', () => {
    const ring = new MemoryDebugRing(10, { maxBytes: 1024 * 1024, maxEventBytes: 8 * 1024 });
    ring.record({ kind: 'tool_error', message: 'x'.repeat(100_000), details: { blob: 'y'.repeat(100_000) } });
    const [event] = ring.query({ limit: 1 }).events;
    assert.ok(event.message.length <= 1024);
    const details = event.details as { truncated: boolean; original_bytes: number; preview: string };
    assert.equal(details.truncated, true);
    assert.ok(details.original_bytes > 100_000);
    assert.ok(details.preview.startsWith('{"blob":"yyy'));
    assert.ok(ring.query({ limit: 1 }).bytes <= 8 * 1024);
  });

  it('keeps an event whose details cannot be serialised, saying so', () => {
    const ring = new MemoryDebugRing(10);
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    ring.record({ kind: 'hub', message: 'odd', details: circular });
    const [event] = ring.query({ limit: 1 }).events;
    assert.match(String((event.details as { unserialisable: string }).unserialisable), /circular/i);
  });
});
