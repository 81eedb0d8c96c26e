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

describe('debug ring: repeated failures of one device', () => {
  it("a burst of one device's failures does not push out another's: past the burst they are counted, and the next kept says how many", () => {
    let t = 0;
    const ring = new MemoryDebugRing(100, { now: () => t, repeats: { burst: 5, perSecond: 1 } });
    ring.record({ kind: 'tool_error', device_id: 'calm', message: 'the one failure that matters' });
    for (let i = 0; i < 18_455; i++) ring.record({ kind: 'tool_error', device_id: 'noisy', message: 'device_busy' });
    const page = ring.query({ limit: 1000 });
    assert.ok(
      page.events.some((e) => e.device_id === 'calm'),
      'the calm device’s failure is still there',
    );
    assert.equal(page.events.filter((e) => e.device_id === 'noisy').length, 5);
    assert.equal(page.suppressed, 18_450);
    assert.equal(page.dropped, 0);
    // Another kind of the same device has a bucket of its own.
    ring.record({ kind: 'snapshot_fail', device_id: 'noisy', message: 'no jpeg' });
    assert.equal(ring.query({ limit: 1, kinds: ['snapshot_fail'] }).events.length, 1);
    // Two seconds later two more are kept; the first says how many were left out before it.
    t += 2000;
    for (let i = 0; i < 10; i++) ring.record({ kind: 'tool_error', device_id: 'noisy', message: 'device_busy' });
    const noisy = ring.query({ limit: 1000, device: 'noisy', kinds: ['tool_error'] }).events;
    assert.equal(noisy.length, 7);
    assert.equal(noisy[5].suppressed_before, 18_450);
    assert.equal(noisy[6].suppressed_before, undefined);
    assert.equal(ring.query({ limit: 1 }).suppressed, 18_458);
  });

  it('forgets the least recently seen device past its bound on tracked pairs, and a burst of 0 bounds nothing', () => {
    const ring = new MemoryDebugRing(100, { now: () => 0, repeats: { burst: 1, perSecond: 1, maxKeys: 2 } });
    for (const d of ['a', 'b', 'a', 'c', 'a']) ring.record({ kind: 'tool_error', device_id: d, message: 'x' });
    // a kept, b kept, a left out, c kept (b forgotten), a left out again: a was seen more recently than b.
    assert.deepEqual(
      ring.query({ limit: 100 }).events.map((e) => e.device_id),
      ['a', 'b', 'c'],
    );
    const open = new MemoryDebugRing(100, { now: () => 0, repeats: { burst: 0, perSecond: 1 } });
    for (let i = 0; i < 50; i++) open.record({ kind: 'tool_error', device_id: 'a', message: 'x' });
    assert.equal(open.query({ limit: 100 }).events.length, 50);
  });
});
