import { mkdir, open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';

/** A message as the outbox keeps it on disk. */
export interface LoggedMessage {
  seq: number;
  topic: string;
  payload: Buffer;
  qos: 1 | 2;
}

/** What a directory of segments held at open: the messages not yet done, in order. */
export interface Recovered {
  pending: LoggedMessage[];
  /** The highest sequence number seen (done or not); new messages continue after it. */
  lastSeq: number;
  /** Records skipped because they were cut short or did not match their checksum (a crash mid-write). */
  torn: number;
}

const MESSAGE = 1;
const DONE = 2;
const HEADER = 8; // u32 body length, u32 crc32 of the body
const SEGMENT = /^seg-(\d{12})\.log$/;

/**
 * The outbox's files: append-only segments of length-prefixed, checksummed records. A message
 * record holds one message; a done record says every message up to its sequence number was
 * delivered or dropped. Reading stops at the first record of a segment that is cut short or whose
 * checksum fails (the tail a crash tore), so a torn write never spoils the records before it; the
 * writer always starts a new segment, so nothing is ever appended after a torn tail. A segment is
 * removed once a done record, already on disk, covers all its messages; the first write to every
 * segment carries the latest done record, so the newest one always holds it.
 */
export class OutboxLog {
  private readonly segments: { name: string; maxSeq: number }[] = [];
  private writer: { handle: FileHandle; name: string; size: number } | undefined;
  private nextSegment = 0;
  /** The sequence number the last done record on disk covers; messages are numbered from 1. */
  private doneOnDisk = 0;

  private constructor(
    private readonly dir: string,
    private readonly segmentBytes: number,
    private readonly maxRecordBytes: number,
  ) {}

  /** Opens (creating) the directory and reads what it holds. */
  static async open(dir: string, options: { segmentBytes: number; maxRecordBytes: number }): Promise<{ log: OutboxLog; recovered: Recovered }> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const log = new OutboxLog(dir, options.segmentBytes, options.maxRecordBytes);
    const recovered = await log.recover();
    return { log, recovered };
  }

  private async recover(): Promise<Recovered> {
    const names = (await readdir(this.dir)).filter((n) => SEGMENT.test(n)).sort();
    const messages = new Map<number, LoggedMessage>();
    let done = 0;
    let lastSeq = 0;
    let torn = 0;
    for (const name of names) {
      const bytes = await readFile(join(this.dir, name));
      let maxSeq = -1;
      let at = 0;
      while (at < bytes.length) {
        const record = this.readRecord(bytes, at);
        if (!record) {
          torn++;
          break;
        }
        at = record.next;
        if (record.kind === 'done') done = Math.max(done, record.seq);
        else {
          messages.set(record.message.seq, record.message);
          maxSeq = Math.max(maxSeq, record.message.seq);
        }
      }
      lastSeq = Math.max(lastSeq, maxSeq, done);
      this.segments.push({ name, maxSeq });
      this.nextSegment = Math.max(this.nextSegment, Number(SEGMENT.exec(name)![1]) + 1);
    }
    this.doneOnDisk = done;
    const pending = [...messages.values()].filter((m) => m.seq > done).sort((a, b) => a.seq - b.seq);
    return { pending, lastSeq, torn };
  }

  private readRecord(
    bytes: Buffer,
    at: number,
  ): { next: number; kind: 'done'; seq: number } | { next: number; kind: 'message'; message: LoggedMessage } | null {
    if (bytes.length - at < HEADER) return null;
    const length = bytes.readUInt32LE(at);
    if (length < 9 || length > this.maxRecordBytes || bytes.length - at - HEADER < length) return null;
    const body = bytes.subarray(at + HEADER, at + HEADER + length);
    if (crc32(body) !== bytes.readUInt32LE(at + 4)) return null;
    const next = at + HEADER + length;
    const seq = Number(body.readBigUInt64LE(1));
    if (body[0] === DONE) return { next, kind: 'done', seq };
    if (body[0] !== MESSAGE || length < 12) return null;
    const qos = body[9];
    const topicLength = body.readUInt16LE(10);
    if ((qos !== 1 && qos !== 2) || 12 + topicLength > length) return null;
    const topic = body.subarray(12, 12 + topicLength).toString('utf8');
    // A copy: the segment's buffer is released once read.
    const payload = Buffer.from(body.subarray(12 + topicLength));
    return { next, kind: 'message', message: { seq, topic, payload, qos } };
  }

  /** The size a message takes on disk. */
  static recordSize(topic: string, payload: Buffer): number {
    return HEADER + 12 + Buffer.byteLength(topic) + payload.length;
  }

  /**
   * Appends the messages and a done record (when `done` moved past what the disk says) in one
   * write, then one fdatasync: the caller batches, never one sync per message.
   */
  async append(messages: LoggedMessage[], done: number): Promise<void> {
    if (messages.length === 0 && done <= this.doneOnDisk) return;
    const fresh = this.writer === undefined;
    const writer = await this.currentWriter();
    const parts: Buffer[] = messages.map(encodeMessage);
    // A new segment starts with the done record, so the newest segment always holds the latest one.
    if (done > this.doneOnDisk || fresh) parts.push(encodeDone(Math.max(done, this.doneOnDisk)));
    const chunk = Buffer.concat(parts);
    await writer.handle.write(chunk, 0, chunk.length, writer.size);
    await writer.handle.datasync();
    writer.size += chunk.length;
    const current = this.segments.at(-1)!;
    for (const m of messages) current.maxSeq = Math.max(current.maxSeq, m.seq);
    if (done > this.doneOnDisk) this.doneOnDisk = done;
    if (writer.size >= this.segmentBytes) await this.closeWriter();
  }

  /**
   * Removes the segments whose messages are all done by the done record on disk (oldest first, so
   * a crash meanwhile leaves the newer ones and their done record); all of them, the current one
   * included, when nothing on disk is pending.
   */
  async prune(nothingPending: boolean): Promise<void> {
    if (nothingPending) await this.closeWriter();
    while (this.segments.length > 0) {
      const oldest = this.segments[0];
      // The newest segment holds the latest done record: kept while anything on disk is pending.
      const newest = this.segments.length === 1;
      if (!nothingPending && (newest || oldest.maxSeq > this.doneOnDisk)) break;
      await unlink(join(this.dir, oldest.name)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      this.segments.shift();
    }
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  async close(): Promise<void> {
    await this.closeWriter();
  }

  private async currentWriter(): Promise<{ handle: FileHandle; name: string; size: number }> {
    if (this.writer) return this.writer;
    const name = `seg-${String(this.nextSegment++).padStart(12, '0')}.log`;
    const handle = await open(join(this.dir, name), 'wx', 0o600);
    this.writer = { handle, name, size: 0 };
    this.segments.push({ name, maxSeq: -1 });
    await syncDir(this.dir); // the new name itself survives a power cut
    return this.writer;
  }

  private async closeWriter(): Promise<void> {
    const writer = this.writer;
    this.writer = undefined;
    await writer?.handle.close();
  }
}

function encodeMessage(m: LoggedMessage): Buffer {
  const topic = Buffer.from(m.topic, 'utf8');
  const body = Buffer.allocUnsafe(12 + topic.length + m.payload.length);
  body[0] = MESSAGE;
  body.writeBigUInt64LE(BigInt(m.seq), 1);
  body[9] = m.qos;
  body.writeUInt16LE(topic.length, 10);
  topic.copy(body, 12);
  m.payload.copy(body, 12 + topic.length);
  return frame(body);
}

function encodeDone(seq: number): Buffer {
  const body = Buffer.alloc(9);
  body[0] = DONE;
  body.writeBigUInt64LE(BigInt(seq), 1);
  return frame(body);
}

function frame(body: Buffer): Buffer {
  const header = Buffer.allocUnsafe(HEADER);
  header.writeUInt32LE(body.length, 0);
  header.writeUInt32LE(crc32(body), 4);
  return Buffer.concat([header, body]);
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
