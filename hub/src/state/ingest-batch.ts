/** One device message as the replicas share it through the ingest stream. */
export interface RelayedMessage {
  topic: string;
  payload: Buffer;
  retain: boolean;
  /** When the replica that took it from the broker received it (ms since the epoch). */
  at: number;
}

/** Per message: topic length (u16), topic, payload length (u32), payload, retain (u8), received at (f64). */
const FIXED_BYTES = 2 + 4 + 1 + 8;

/**
 * Many messages in one stream entry. One XADD per message was most of a replica's CPU (command
 * encoding, a write each, the reply, and again for every reader); an entry per batch costs one
 * command whatever the batch holds, and reading it back is a few buffer reads per message.
 */
export function packMessages(messages: readonly RelayedMessage[]): Buffer {
  let size = 0;
  for (const m of messages) size += FIXED_BYTES + Buffer.byteLength(m.topic) + m.payload.length;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (const m of messages) {
    const topicLength = out.write(m.topic, o + 2);
    out.writeUInt16BE(topicLength, o);
    o += 2 + topicLength;
    o = out.writeUInt32BE(m.payload.length, o);
    o += m.payload.copy(out, o);
    o = out.writeUInt8(m.retain ? 1 : 0, o);
    o = out.writeDoubleBE(m.at, o);
  }
  return out;
}

/** The messages of a packed entry; throws a RangeError on bytes that are not one (a truncated or foreign entry). */
export function unpackMessages(packed: Buffer): RelayedMessage[] {
  const out: RelayedMessage[] = [];
  let o = 0;
  while (o < packed.length) {
    const topicLength = packed.readUInt16BE(o);
    o += 2;
    if (o + topicLength > packed.length) throw new RangeError('packed ingest entry: topic past the end');
    const topic = packed.toString('utf8', o, o + topicLength);
    o += topicLength;
    const payloadLength = packed.readUInt32BE(o);
    o += 4;
    if (o + payloadLength + 9 > packed.length) throw new RangeError('packed ingest entry: payload past the end');
    // A view, not a copy: the entry's buffer lives as long as the messages do.
    const payload = packed.subarray(o, o + payloadLength);
    o += payloadLength;
    const retainByte = packed.readUInt8(o);
    const at = packed.readDoubleBE(o + 1);
    // A time that is not one would be saved with the cache and make the whole saved cache unreadable.
    if (retainByte > 1 || !Number.isFinite(at) || at < 0) throw new RangeError('packed ingest entry: not a message (retain flag or time)');
    const retain = retainByte === 1;
    o += 9;
    out.push({ topic, payload, retain, at });
  }
  return out;
}

/** Writes sent before the first answers: enough to keep the pipe full across a slow round trip, few enough that a batch still gathers. */
export const DEFAULT_MAX_IN_FLIGHT = 4;

/**
 * Group commit, pipelined: the messages of one event-loop turn go in one write, sent at the turn's
 * end whether or not earlier writes have answered (up to `maxInFlight` at once; past that they wait
 * for the first to answer). Each item resolves when its own write has, so a message waits one turn
 * and one round trip, not for the write before it as well: with one write at a time, what arrived
 * during a write waited for its answer and then for a round trip of its own, and under load the
 * broker's in-flight window (Receive Maximum) filled with messages waiting for Redis. The writes are
 * issued in order on one connection, which Redis answers in order: the stream keeps the arrival
 * order.
 */
export class GroupCommit<T> {
  /** Batches not sent yet, each of at most maxBatch items; the last one takes what is added. */
  private queued: Batch<T>[] = [];
  private queuedItems = 0;
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly maxInFlight = DEFAULT_MAX_IN_FLIGHT,
  ) {}

  /**
   * Resolves once the item is written; rejects with the write's error (each item of a failed write
   * does). The items of one write share one promise: at 20 000 messages a second a promise and its
   * two callbacks per message were garbage the replica's collector worked through.
   */
  add(item: T): Promise<void> {
    let batch = this.queued.at(-1);
    if (!batch || batch.items.length >= this.maxBatch) this.queued.push((batch = newBatch<T>()));
    batch.items.push(item);
    this.queuedItems++;
    this.schedule();
    return batch.written;
  }

  get waiting(): number {
    return this.queuedItems;
  }

  /** Writes under way (sent, not answered). */
  get writing(): number {
    return this.inFlight;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queued.length === 0) return;
    this.scheduled = true;
    // The rest of this turn's messages join the write.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.queued.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queued.shift()!;
      this.queuedItems -= batch.items.length;
      this.inFlight++;
      let written: Promise<void>;
      try {
        written = this.write(batch.items);
      } catch (err) {
        written = Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      written.then(
        () => this.settle(batch, undefined),
        (err: unknown) => this.settle(batch, err ?? new Error('write failed')),
      );
    }
  }

  private settle(batch: Batch<T>, err: unknown): void {
    this.inFlight--;
    if (err === undefined) batch.resolve();
    else batch.reject(err);
    this.schedule();
  }
}

interface Batch<T> {
  items: T[];
  written: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function newBatch<T>(): Batch<T> {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const written = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { items: [], written, resolve, reject };
}
