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
  const topics = messages.map((m) => Buffer.from(m.topic));
  for (let i = 0; i < messages.length; i++) size += FIXED_BYTES + topics[i].length + messages[i].payload.length;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    o = out.writeUInt16BE(topics[i].length, o);
    o += topics[i].copy(out, o);
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

/**
 * Group commit: messages handed over while a write is under way wait for the next one, which takes
 * them all. The latency of a message is at most two writes; the writes per second stay one per
 * round trip whatever the message rate.
 */
export class GroupCommit<T> {
  private queued: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private writing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly maxBatch: number,
  ) {}

  /** Resolves once the item is written; rejects with the write's error (each item of a failed write does). */
  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ item, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        // The rest of this turn's messages join the first write.
        setImmediate(() => void this.drain());
      }
    });
  }

  get waiting(): number {
    return this.queued.length;
  }

  private async drain(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, this.maxBatch);
      try {
        await this.write(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.writing = false;
  }
}
