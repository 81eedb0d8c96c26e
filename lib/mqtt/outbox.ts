import { LookoutError } from 'lookout/core';
import { silentBusLogger, type BusLogger } from './bus-logger.js';
import { OutboxLog, type LoggedMessage } from './outbox-log.js';
import type { OutboxStats } from 'lookout/core/host';

export type { OutboxStats } from 'lookout/core/host';

export interface OutboxOptions {
  /** The folder of the segment files (created); one outbox per folder. */
  dir: string;
  /** Messages held at most; beyond, the oldest are dropped. Default 50 000. */
  maxMessages?: number;
  /** Bytes (as stored) held at most; beyond, the oldest are dropped. Default 32 MiB. */
  maxBytes?: number;
  /** How often what waits is written to disk, in one write and one sync. Default 500 ms. */
  flushMs?: number;
  /** Size at which a new segment file is started. Default 4 MiB. */
  segmentBytes?: number;
  logger?: BusLogger;
}

interface Entry extends LoggedMessage {
  size: number;
  at: number;
  state: 'queued' | 'sent' | 'done';
  onDisk: boolean;
}

/**
 * A bounded, disk-backed queue of QoS 1 messages for the broker: at least once across broker
 * outages and restarts of the process. Taking a message is synchronous and in memory; a timer
 * writes what is still waiting every `flushMs` in one write and one sync, so a message the broker
 * acknowledges within that time never touches the disk (a camera's flash is not worn by a healthy
 * link). The bound (count and bytes) drops the oldest first and counts it.
 */
export class Outbox {
  private readonly entries: Entry[] = [];
  private head = 0;
  private bytes = 0;
  private lastSeq: number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private closed = false;
  private failing = false;
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  private readonly flushMs: number;
  private readonly log: BusLogger;
  private readonly counters = { kept: 0, delivered: 0, dropped: 0, recovered: 0, torn: 0, written: 0 };

  private constructor(
    private readonly disk: OutboxLog,
    options: OutboxOptions,
    recovered: { pending: LoggedMessage[]; lastSeq: number; torn: number },
  ) {
    this.maxMessages = options.maxMessages ?? 50_000;
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    this.flushMs = options.flushMs ?? 500;
    this.log = options.logger ?? silentBusLogger;
    this.lastSeq = recovered.lastSeq;
    this.counters.torn = recovered.torn;
    for (const m of recovered.pending) {
      this.push({ ...m, size: OutboxLog.recordSize(m.topic, m.payload), at: Date.now(), state: 'queued', onDisk: true });
    }
    this.counters.recovered = this.length;
    this.counters.kept = this.length;
  }

  static async open(options: OutboxOptions): Promise<Outbox> {
    const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    for (const [key, value] of [
      ['maxMessages', options.maxMessages],
      ['maxBytes', options.maxBytes],
      ['flushMs', options.flushMs],
    ] as const) {
      if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
        throw new LookoutError('config_invalid', `outbox ${key} must be a positive integer, got ${value}`, { details: { key } });
      }
    }
    const { log, recovered } = await OutboxLog.open(options.dir, { segmentBytes: options.segmentBytes ?? 4 * 1024 * 1024, maxRecordBytes: maxBytes });
    const outbox = new Outbox(log, options, recovered);
    if (recovered.pending.length > 0 || recovered.torn > 0) {
      outbox.log.info({ dir: options.dir, recovered: recovered.pending.length, torn: recovered.torn }, 'outbox recovered messages from disk');
    }
    outbox.timer = setInterval(
      () =>
        void outbox.flush().then(
          () => (outbox.failing = false),
          (err: unknown) => {
            // Once per run of failures (a full disk): the messages stay in memory, within the bound, and the next flush tries again.
            if (!outbox.failing) outbox.log.error({ err }, 'outbox not written to disk; kept in memory and tried again');
            outbox.failing = true;
          },
        ),
      outbox.flushMs,
    );
    outbox.timer.unref();
    return outbox;
  }

  get length(): number {
    return this.entries.length - this.head;
  }

  /** Takes a message; drops the oldest when over the bound. Synchronous: never waits on disk or broker. */
  put(topic: string, payload: Buffer, qos: 1 | 2): void {
    if (this.closed) throw new LookoutError('bus_closed', 'the outbox is closed');
    const size = OutboxLog.recordSize(topic, payload);
    if (size > this.maxBytes) {
      this.counters.dropped++;
      this.log.warn({ topic, bytes: size, maxBytes: this.maxBytes }, 'a message larger than the outbox was dropped');
      return;
    }
    this.push({ seq: ++this.lastSeq, topic, payload, qos, size, at: Date.now(), state: 'queued', onDisk: false });
    this.counters.kept++;
    let dropped = 0;
    while (this.length > this.maxMessages || this.bytes > this.maxBytes) {
      const oldest = this.entries[this.head];
      oldest.state = 'done';
      this.shift();
      dropped++;
    }
    if (dropped > 0) {
      // Logged once; health carries the count.
      if (this.counters.dropped === 0) this.log.warn({ maxMessages: this.maxMessages, maxBytes: this.maxBytes }, 'outbox full: dropping the oldest messages');
      this.counters.dropped += dropped;
    }
  }

  /** The oldest message not yet handed to the broker, marked as sent; undefined when none waits. */
  take(): Readonly<LoggedMessage> | undefined {
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i];
      if (e.state === 'queued') {
        e.state = 'sent';
        return e;
      }
    }
    return undefined;
  }

  /** The broker acknowledged it. */
  delivered(message: Readonly<LoggedMessage>): void {
    const e = message as Entry;
    if (e.state === 'done') return; // dropped by the bound meanwhile
    e.state = 'done';
    this.counters.delivered++;
    while (this.length > 0 && this.entries[this.head].state === 'done') this.shift();
  }

  /** Sending failed: it waits again, in its place. */
  retry(message: Readonly<LoggedMessage>): void {
    const e = message as Entry;
    if (e.state === 'sent') e.state = 'queued';
  }

  /** Every message handed out and not acknowledged waits again (a new session sends them again). */
  retryAll(): void {
    for (let i = this.head; i < this.entries.length; i++) if (this.entries[i].state === 'sent') this.entries[i].state = 'queued';
  }

  stats(): OutboxStats {
    return { queued: this.length, queued_bytes: this.bytes, ...this.counters, max_messages: this.maxMessages, max_bytes: this.maxBytes };
  }

  /**
   * Writes what waits and is not on disk yet (a message in flight only once it waited a whole
   * interval), records what is done, and removes the segments no longer needed. One at a time.
   */
  flush(final = false): Promise<void> {
    this.flushing ??= this.write(final).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(final: boolean): Promise<void> {
    const now = Date.now();
    const batch: Entry[] = [];
    let pendingOnDisk = false;
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i];
      if (e.state === 'done') continue;
      if (!e.onDisk && (final || e.state === 'queued' || now - e.at >= this.flushMs)) batch.push(e);
      if (e.onDisk || batch.at(-1) === e) pendingOnDisk = true;
    }
    const done = this.length > 0 ? this.entries[this.head].seq - 1 : this.lastSeq;
    if (batch.length === 0 && !this.disk.segmentCount) return;
    if (batch.length > 0 || pendingOnDisk) await this.disk.append(batch, done);
    for (const e of batch) e.onDisk = true;
    this.counters.written += batch.length;
    await this.disk.prune(!pendingOnDisk);
  }

  /** Writes everything still held, then stops the timer. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.flushing?.catch(() => undefined);
    await this.flush(true);
    await this.disk.close();
  }

  private push(e: Entry): void {
    this.entries.push(e);
    this.bytes += e.size;
  }

  private shift(): void {
    this.bytes -= this.entries[this.head].size;
    this.entries[this.head] = undefined as unknown as Entry; // released for the collector
    this.head++;
    // Compacted once the dead prefix is half the array: amortised O(1) per message.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }
}
