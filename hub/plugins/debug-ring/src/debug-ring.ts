import { RingBuffer } from './ring-buffer.js';
import { HUB_EVENT_KINDS, SPEC_EVENT_KINDS, type DebugEvent, type DebugEventFilter, type DebugEventInput, type DebugEventPage, type DebugRing } from './service.js';

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
  private readonly ingest: RingBuffer<Stored>;
  private readonly other: RingBuffer<Stored>;
  private readonly knownKinds = new Set<string>([...SPEC_EVENT_KINDS, ...HUB_EVENT_KINDS]);
  private seq = 0;

  constructor(readonly capacity: number, private readonly now: () => number = Date.now) {
    this.ingest = new RingBuffer(capacity);
    this.other = new RingBuffer(capacity);
  }

  record(event: DebugEventInput): void {
    this.knownKinds.add(event.kind);
    const stored: Stored = { ...event, seq: ++this.seq, ms: this.now() };
    (event.kind === 'ingest' ? this.ingest : this.other).push(stored);
  }

  query(filter: DebugEventFilter): DebugEventPage {
    const kinds = filter.kinds && filter.kinds.length > 0 ? new Set(filter.kinds) : undefined;
    const lanes = kinds && !kinds.has('ingest') ? [this.other.toArray()] : kinds && kinds.size === 1 ? [this.ingest.toArray()] : [this.ingest.toArray(), this.other.toArray()];
    const merged = lanes.length === 1 ? lanes[0]! : mergeBySeq(lanes[0]!, lanes[1]!);
    const matching = merged.filter(
      (e) => (!kinds || kinds.has(e.kind)) && (filter.device === undefined || e.device_id === filter.device) && (filter.sinceMs === undefined || e.ms > filter.sinceMs),
    );
    const page = matching.slice(Math.max(0, matching.length - filter.limit));
    return {
      events: page.map(toEvent),
      capacity: this.capacity,
      held: this.ingest.size + this.other.size,
      dropped: this.ingest.dropped + this.other.dropped,
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
    if (j >= b.length || (i < a.length && a[i]!.seq < b[j]!.seq)) out.push(a[i++]!);
    else out.push(b[j++]!);
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
