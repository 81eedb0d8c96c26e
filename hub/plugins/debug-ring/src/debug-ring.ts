import { IngestLane } from './ingest-lane.js';
import { RingBuffer } from './ring-buffer.js';
import {
  HUB_EVENT_KINDS,
  SPEC_EVENT_KINDS,
  type DebugEvent,
  type DebugEventFilter,
  type DebugEventInput,
  type DebugEventPage,
  type DebugRing,
} from './service.js';

interface Stored extends DebugEventInput {
  seq: number;
  ms: number;
}

/**
 * Two lanes of the same capacity: valid ingested messages arrive at 10 Hz per device and would
 * push the hub's rare failures out of a single ring within seconds, so they are kept apart and
 * merged by sequence number when read.
 */
export class MemoryDebugRing implements DebugRing {
  private readonly ingestLane: IngestLane;
  private readonly other: RingBuffer<Stored>;
  private readonly knownKinds = new Set<string>([...SPEC_EVENT_KINDS, ...HUB_EVENT_KINDS]);
  private seq = 0;

  constructor(
    readonly capacity: number,
    private readonly now: () => number = Date.now,
  ) {
    this.ingestLane = new IngestLane(capacity);
    this.other = new RingBuffer(capacity);
  }

  record(event: DebugEventInput): void {
    this.knownKinds.add(event.kind);
    const stored: Stored = { kind: event.kind, message: event.message, seq: ++this.seq, ms: this.now() };
    if (event.device_id !== undefined) stored.device_id = event.device_id;
    if (event.topic !== undefined) stored.topic = event.topic;
    if (event.details !== undefined) stored.details = event.details;
    if (event.kind === 'ingest') this.ingestLane.push(stored.seq, stored.ms, event.device_id ?? '', event.topic ?? '', event.message);
    else this.other.push(stored);
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
      dropped: this.ingestLane.dropped + this.other.dropped,
      matched: matching.length,
    };
  }

  kinds(): string[] {
    return [...this.knownKinds];
  }

  declareKind(kind: string): void {
    this.knownKinds.add(kind);
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
  const e: DebugEvent = { seq: s.seq, time: new Date(s.ms).toISOString(), kind: s.kind, message: s.message };
  if (s.device_id !== undefined) e.device_id = s.device_id;
  if (s.topic !== undefined) e.topic = s.topic;
  if (s.details !== undefined) e.details = s.details;
  return e;
}
