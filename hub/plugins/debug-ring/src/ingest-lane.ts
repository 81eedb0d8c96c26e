/** One recorded ingest: what the ring shows of a valid bus message. */
export interface IngestRecord {
  seq: number;
  ms: number;
  deviceId: string;
  topic: string;
  suffix: string;
}

/**
 * The ring lane of valid ingested messages, kept as parallel arrays instead of one object per
 * message: it is written thousands of times a second, and objects that live for a few thousand
 * messages would all be promoted to the old generation only to die there. The strings are the
 * ingest's interned ones (one per topic), so a write allocates nothing.
 */
export class IngestLane {
  private readonly seq: Float64Array;
  private readonly ms: Float64Array;
  private readonly device: string[];
  private readonly topic: string[];
  private readonly suffix: string[];
  private next = 0;
  private count = 0;
  dropped = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`lane capacity must be a positive integer, got ${capacity}`);
    this.seq = new Float64Array(capacity);
    this.ms = new Float64Array(capacity);
    this.device = new Array<string>(capacity).fill('');
    this.topic = new Array<string>(capacity).fill('');
    this.suffix = new Array<string>(capacity).fill('');
  }

  get size(): number {
    return this.count;
  }

  push(seq: number, ms: number, deviceId: string, topic: string, suffix: string): void {
    const i = this.next;
    this.seq[i] = seq;
    this.ms[i] = ms;
    this.device[i] = deviceId;
    this.topic[i] = topic;
    this.suffix[i] = suffix;
    this.next = (i + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
    else this.dropped++;
  }

  /** Oldest first. */
  toArray(): IngestRecord[] {
    const out: IngestRecord[] = [];
    const start = (this.next - this.count + this.capacity) % this.capacity;
    for (let k = 0; k < this.count; k++) {
      const i = (start + k) % this.capacity;
      out.push({ seq: this.seq[i], ms: this.ms[i], deviceId: this.device[i], topic: this.topic[i], suffix: this.suffix[i] });
    }
    return out;
  }
}
