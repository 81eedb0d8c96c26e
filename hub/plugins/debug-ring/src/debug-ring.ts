import { KeyedRateLimiter, type KeyedRateLimits } from 'lookout/lib/limits';
import { sizeEvent } from './event-size.js';
import { IngestLane } from './ingest-lane.js';
import { RingBuffer } from './ring-buffer.js';
import {
  EVENT_KINDS,
  type DebugEvent,
  type DebugEventFilter,
  type DebugEventInput,
  type DebugEventPage,
  type DebugRing,
  type RecordListener,
} from './service.js';

interface Stored {
  kind: string;
  message: string;
  device_id?: string;
  topic?: string;
  /** JSON text (see event-size.ts). */
  details?: string;
  seq: number;
  ms: number;
  /** Reloaded from the hub's saved state: it happened before the last restart. */
  restored?: true;
  /** Events of the same device and kind left out just before this one (`repeats`). */
  suppressed_before?: number;
}

/** An event as the hub's saved state holds it (the failures' lane; details as their JSON text). */
export interface SavedEvent {
  kind: string;
  message: string;
  device_id?: string;
  topic?: string;
  details?: string;
  ms: number;
}

export interface DebugRingOptions {
  /** Bound on the bytes of the events besides valid ingests (default 4 MiB). */
  maxBytes?: number;
  /** Largest single event; bigger details are replaced by a preview (default 64 KiB, at most maxBytes). */
  maxEventBytes?: number;
  now?: () => number;
  /** Called when an event other than a valid ingest is recorded (the part of the ring that is saved). */
  onChange?: () => void;
  /**
   * Bound on the failures of one device and kind (none when absent): a burst of one device's
   * `device_busy` (18 455 in one attack) pushed every other device's failures out of the ring. Past
   * it they are counted, and the next one kept says how many were left out before it.
   */
  repeats?: KeyedRateLimits;
}

export const DEFAULT_RING_MAX_BYTES = 4 * 1024 * 1024;
export const DEFAULT_RING_MAX_EVENT_BYTES = 64 * 1024;

/**
 * Two lanes of the same capacity: valid ingested messages arrive at 10 Hz per device and would
 * push the hub's rare failures out of a single ring within seconds, so they are kept apart and
 * merged by sequence number when read. The failures' lane is bounded in bytes as well as in count:
 * an event may quote a bus message of up to 256 KiB, and 2 000 of them would be half a gigabyte.
 * The ingest lane holds fixed-size records of strings the ingest interns (a topic is at most 512
 * characters), so its count bounds its memory.
 */
export class MemoryDebugRing implements DebugRing {
  private readonly ingestLane: IngestLane;
  private readonly other: RingBuffer<Stored>;
  private readonly maxEventBytes: number;
  private readonly now: () => number;
  private readonly onChange: (() => void) | undefined;
  private readonly repeats: KeyedRateLimiter | undefined;
  private readonly listeners = new Set<RecordListener>();
  private seq = 0;

  constructor(
    readonly capacity: number,
    options: DebugRingOptions = {},
  ) {
    const maxBytes = options.maxBytes ?? DEFAULT_RING_MAX_BYTES;
    this.maxEventBytes = Math.min(options.maxEventBytes ?? DEFAULT_RING_MAX_EVENT_BYTES, maxBytes);
    this.now = options.now ?? Date.now;
    this.onChange = options.onChange;
    this.repeats = options.repeats ? new KeyedRateLimiter(options.repeats) : undefined;
    this.ingestLane = new IngestLane(capacity);
    this.other = new RingBuffer(capacity, maxBytes);
  }

  record(event: DebugEventInput, atMs?: number): void {
    const ms = atMs ?? this.now();
    if (event.kind !== 'ingest') this.notify(event, ms);
    const suppressedBefore = event.kind === 'ingest' || !this.repeats ? 0 : this.repeats.take(`${event.kind}\u0000${event.device_id ?? ''}`, ms);
    if (suppressedBefore === false) return;
    const extra = (event.device_id?.length ?? 0) + (event.topic?.length ?? 0) + event.kind.length;
    const sized = sizeEvent(event.message, event.details, extra, this.maxEventBytes);
    const stored: Stored = { kind: event.kind, message: sized.message, seq: ++this.seq, ms };
    if (suppressedBefore > 0) stored.suppressed_before = suppressedBefore;
    if (event.device_id !== undefined) stored.device_id = event.device_id;
    if (event.topic !== undefined) stored.topic = event.topic;
    if (sized.details !== undefined) stored.details = sized.details;
    if (event.kind === 'ingest') this.ingestLane.push(stored.seq, stored.ms, event.device_id ?? '', event.topic ?? '', sized.message);
    else {
      this.other.push(stored, sized.bytes);
      this.onChange?.();
    }
  }

  onRecord(listener: RecordListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(event: DebugEventInput, ms: number): void {
    for (const listener of this.listeners) {
      try {
        listener(event, ms);
      } catch {
        // A listener's failure is its own: the ring records the event all the same.
      }
    }
  }

  /**
   * The newest events of the failures' lane, oldest first, at most `limit` and `maxBytes`: what
   * a restart keeps. Valid ingests are not kept (they are the bus's traffic, not the hub's history).
   */
  tail(limit: number, maxBytes: number): SavedEvent[] {
    const all = this.other.toArray();
    const out: SavedEvent[] = [];
    let bytes = 0;
    for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
      const { seq: _seq, restored: _restored, suppressed_before: _suppressed, ...saved } = all[i];
      bytes += sizeOfSaved(saved);
      if (bytes > maxBytes) break;
      out.push(saved);
    }
    return out.reverse();
  }

  /** Events saved before a restart, oldest first, taken in before any new one: they keep their time and are marked restored. */
  restore(events: readonly SavedEvent[]): void {
    for (const e of events) {
      const stored: Stored = { ...e, seq: ++this.seq, restored: true };
      this.other.push(stored, sizeOfSaved(e));
    }
  }

  ingest(deviceId: string, topic: string, suffix: string, ms: number): void {
    // Runs for every valid bus message: no allocation, no clock read.
    this.ingestLane.push(++this.seq, ms, deviceId, topic, suffix);
  }

  query(filter: DebugEventFilter): DebugEventPage {
    const kinds = filter.kinds && filter.kinds.length > 0 ? new Set(filter.kinds) : undefined;
    const ingest = () =>
      this.ingestLane.toArray().map((r): Stored => ({ kind: 'ingest', device_id: r.deviceId, topic: r.topic, message: r.suffix, seq: r.seq, ms: r.ms }));
    const lanes = kinds && !kinds.has('ingest') ? [this.other.toArray()] : kinds && kinds.size === 1 ? [ingest()] : [ingest(), this.other.toArray()];
    const merged = lanes.length === 1 ? lanes[0] : mergeBySeq(lanes[0], lanes[1]);
    const matching = merged.filter(
      (e) =>
        (!kinds || kinds.has(e.kind)) &&
        (filter.device === undefined || e.device_id === filter.device) &&
        (filter.sinceMs === undefined || e.ms > filter.sinceMs),
    );
    const page = matching.slice(Math.max(0, matching.length - filter.limit));
    return {
      events: page.map(toEvent),
      capacity: this.capacity,
      held: this.ingestLane.size + this.other.size,
      bytes: this.other.held,
      maxBytes: this.other.maxWeight,
      dropped: this.ingestLane.dropped + this.other.dropped,
      suppressed: this.repeats?.refusedTotal ?? 0,
      matched: matching.length,
    };
  }

  kinds(): string[] {
    return [...EVENT_KINDS];
  }
}

function mergeBySeq(a: Stored[], b: Stored[]): Stored[] {
  const out: Stored[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i].seq < b[j].seq)) out.push(a[i++]);
    else out.push(b[j++]);
  }
  return out;
}

function toEvent(s: Stored): DebugEvent {
  const e: DebugEvent = { seq: s.seq, timestamp: new Date(s.ms).toISOString(), kind: s.kind, message: s.message };
  if (s.device_id !== undefined) e.device_id = s.device_id;
  if (s.topic !== undefined) e.topic = s.topic;
  if (s.details !== undefined) e.details = JSON.parse(s.details) as unknown;
  if (s.restored) e.restored = true;
  if (s.suppressed_before !== undefined) e.suppressed_before = s.suppressed_before;
  return e;
}

/** What an event weighs in the ring, as sizeEvent counts it. */
function sizeOfSaved(e: SavedEvent): number {
  return (
    96 + e.kind.length + (e.device_id?.length ?? 0) + (e.topic?.length ?? 0) + Buffer.byteLength(e.message) + (e.details ? Buffer.byteLength(e.details) : 0)
  );
}
