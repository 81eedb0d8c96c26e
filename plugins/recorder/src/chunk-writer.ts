import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { SerialQueue } from 'lookout/lib/limits';
import type { EncodedPicture } from '../../encode/src/service.js';
import { chunkName, files } from './chunk-files.js';
import type { DetsLine } from './detection-log.js';

/** A chunk renamed into place: complete, fsynced, playable. */
export interface CompletedChunk {
  name: string;
  startedAtMs: number;
  /** Capture time of its last picture (epoch ms). */
  lastCapturedAtMs: number;
  frames: number;
  keyframes: number;
  fps: number;
  width: number;
  height: number;
  sizeBytes: number;
  dets: DetsLine[];
  /** Detector results per second of video while it was written. */
  strideFps: number;
}

interface OpenChunk {
  name: string;
  video: FileHandle;
  log: FileHandle;
  startedAtMs: number;
  lastCapturedAtMs: number;
  fps: number;
  width: number;
  height: number;
  /** The encoder run it belongs to: a new run starts a new chunk (new parameter sets, maybe a new size). */
  generation: number;
  frames: number;
  keyframes: number;
  bytes: number;
  dets: DetsLine[];
  /** Log lines not yet appended to the file. */
  pendingLines: string[];
}

/** The stream's parameters when a chunk starts (they hold for the whole chunk: a change starts a new encoder run). */
export interface StreamFacts {
  fps: number;
  width: number;
  height: number;
}

export interface ChunkWriterOptions {
  dir: string;
  chunkSeconds: number;
  /** First sequence number (one past the newest chunk already on disk). */
  nextSeq: number;
  /**
   * Bytes of pictures waiting for the disk at most (RECORDER_MAX_QUEUED_BYTES). Past it pictures are
   * dropped, the chunk in progress is abandoned and writing resumes on the next keyframe, so a disk
   * that hangs costs a bounded amount of memory. Unbounded when left out.
   */
  maxQueuedBytes?: number;
}

/** The write queue as the status file and get_recording_status show it. */
export interface WriteQueueState {
  queued_bytes: number;
  queued_pictures: number;
  max_queued_bytes: number | null;
  /** Pictures dropped because the queue was full (and while waiting for a keyframe after). */
  dropped_pictures: number;
  /** Chunks abandoned because pictures were dropped in them. */
  abandoned_chunks: number;
  /** Pictures are being dropped now (the queue filled up and no keyframe has been taken since). */
  dropping: boolean;
  last_drop_at: string | null;
}

/**
 * Writes the encoded stream as chunks: each starts on a keyframe and is cut on the first keyframe
 * after CHUNK_SECONDS of video (or on the first picture of a new encoder run), written as `.<name>.part` (with its `.dets.jsonl` beside it) and
 * fsynced and renamed only when complete, so a crash never leaves a listed chunk that does not play.
 * A failed write (ENOSPC) drops the chunk in progress, frees its space and starts again on the next
 * keyframe; the error stays in `lastError` for the status file and the recommendation.
 */
export class ChunkWriter {
  private current: OpenChunk | undefined;
  private readonly queue = new SerialQueue();
  private seq: number;
  lastWriteAtMs: number | null = null;
  lastError: { at: string; message: string } | null = null;
  picturesWritten = 0;
  picturesSkipped = 0;
  picturesDropped = 0;
  chunksAbandoned = 0;
  private queuedBytes = 0;
  private queuedPictures = 0;
  /** Set when a picture was dropped: everything up to the next keyframe that fits is dropped too. */
  private dropping = false;
  private lastDropAtMs: number | null = null;

  constructor(private readonly options: ChunkWriterOptions) {
    this.seq = options.nextSeq;
  }

  /**
   * Appends a picture; resolves with the chunk it completed, if it cut one. A picture that does not fit
   * in the write queue is dropped (resolves null at once): the chunk in progress is abandoned, since a
   * gap would not decode, and the next chunk starts on the next keyframe that fits.
   */
  write(picture: EncodedPicture, stream: StreamFacts): Promise<CompletedChunk | null> {
    const size = picture.data.length;
    const max = this.options.maxQueuedBytes;
    const fits = max === undefined || this.queuedBytes + size <= max;
    if (!fits || (this.dropping && !picture.keyframe)) {
      this.picturesDropped++;
      this.lastDropAtMs = Date.now();
      if (!this.dropping) {
        this.dropping = true;
        // Queued behind the pictures already waiting (they belong before the gap); holds no picture.
        void this.queue.run(() => this.abandonForDrop());
      }
      return Promise.resolve(null);
    }
    this.dropping = false;
    this.queuedBytes += size;
    this.queuedPictures++;
    return this.queue.run(async () => {
      try {
        return await this.append(picture, stream);
      } finally {
        this.queuedBytes -= size;
        this.queuedPictures--;
      }
    });
  }

  writeQueue(): WriteQueueState {
    return {
      queued_bytes: this.queuedBytes,
      queued_pictures: this.queuedPictures,
      max_queued_bytes: this.options.maxQueuedBytes ?? null,
      dropped_pictures: this.picturesDropped,
      abandoned_chunks: this.chunksAbandoned,
      dropping: this.dropping,
      last_drop_at: this.lastDropAtMs === null ? null : new Date(this.lastDropAtMs).toISOString(),
    };
  }

  private async abandonForDrop(): Promise<void> {
    const c = this.current;
    if (!c) return;
    this.chunksAbandoned++;
    const max = this.options.maxQueuedBytes ?? 0;
    await this.abandon(c, new Error(`write queue full (${max} bytes waiting for the disk): pictures dropped, chunk ${c.name} abandoned`));
  }

  private async append(picture: EncodedPicture, stream: StreamFacts): Promise<CompletedChunk | null> {
    let completed: CompletedChunk | null = null;
    const c = this.current;
    if (c && picture.generation !== c.generation) completed = await this.close(c);
    else if (c && picture.keyframe && c.frames / c.fps >= this.options.chunkSeconds) completed = await this.close(c);
    if (!this.current) {
      if (!picture.keyframe) {
        this.picturesSkipped++; // a chunk starts on a keyframe, or a decoder could not start it
        return completed;
      }
      if (!(await this.openChunk(picture, stream))) return completed;
    }
    const o = this.current!;
    try {
      await o.video.write(picture.data);
      await this.flushLog(o);
    } catch (err) {
      await this.abandon(o, err);
      return completed;
    }
    o.frames++;
    if (picture.keyframe) o.keyframes++;
    o.bytes += picture.data.length;
    o.lastCapturedAtMs = picture.capturedAtMs;
    this.picturesWritten++;
    this.lastWriteAtMs = Date.now();
    return completed;
  }

  /** A detector result joins the chunk being written (dropped while none is). */
  logDetections(line: DetsLine): void {
    const c = this.current;
    if (!c || this.dropping) return; // while dropping, the chunk in progress is to be abandoned
    c.dets.push(line);
    c.pendingLines.push(JSON.stringify(line));
  }

  /** Completes the chunk in progress (at stop, or when the encoder exits mid-chunk). */
  finish(): Promise<CompletedChunk | null> {
    return this.queue.run(async () => (this.current ? this.close(this.current) : null));
  }

  /** The chunk being written, for video_understand over a range that reaches now. */
  inProgress(): { name: string; startedAtMs: number; frames: number; dets: readonly DetsLine[] } | null {
    const c = this.current;
    return c ? { name: c.name, startedAtMs: c.startedAtMs, frames: c.frames, dets: c.dets } : null;
  }

  private async openChunk(first: EncodedPicture, stream: StreamFacts): Promise<boolean> {
    const startedAtMs = first.capturedAtMs;
    const name = chunkName(startedAtMs, this.seq++);
    const dir = this.options.dir;
    let video: FileHandle | undefined;
    try {
      video = await open(join(dir, files.part(name)), 'w');
      const log = await open(join(dir, files.part(files.detsLog(name))), 'w');
      this.current = {
        name,
        video,
        log,
        startedAtMs,
        lastCapturedAtMs: startedAtMs,
        ...stream,
        generation: first.generation,
        frames: 0,
        keyframes: 0,
        bytes: 0,
        dets: [],
        pendingLines: [],
      };
      return true;
    } catch (err) {
      await video?.close().catch(() => undefined);
      await rm(join(dir, files.part(name)), { force: true }).catch(() => undefined);
      this.fail(err);
      return false;
    }
  }

  private async flushLog(c: OpenChunk): Promise<void> {
    if (c.pendingLines.length === 0) return;
    const text = `${c.pendingLines.join('\n')}\n`;
    c.pendingLines = [];
    await c.log.write(text);
  }

  private async close(c: OpenChunk): Promise<CompletedChunk | null> {
    this.current = undefined;
    const dir = this.options.dir;
    try {
      await this.flushLog(c);
      await c.log.sync();
      await c.log.close();
      await c.video.sync();
      await c.video.close();
      // The log first: a chunk in place always has its log beside it.
      await rename(join(dir, files.part(files.detsLog(c.name))), join(dir, files.detsLog(c.name)));
      await rename(join(dir, files.part(c.name)), join(dir, c.name));
      await syncDir(dir);
    } catch (err) {
      await this.abandon(c, err);
      return null;
    }
    const seconds = c.frames / c.fps;
    return {
      name: c.name,
      startedAtMs: c.startedAtMs,
      lastCapturedAtMs: c.lastCapturedAtMs,
      frames: c.frames,
      keyframes: c.keyframes,
      fps: c.fps,
      width: c.width,
      height: c.height,
      sizeBytes: c.bytes,
      dets: c.dets,
      strideFps: seconds > 0 ? c.dets.length / seconds : 0,
    };
  }

  /** Drops a chunk that cannot be written: its space is what the next write needs. */
  private async abandon(c: OpenChunk, err: unknown): Promise<void> {
    if (this.current === c) this.current = undefined;
    await c.video.close().catch(() => undefined);
    await c.log.close().catch(() => undefined);
    const dir = this.options.dir;
    await rm(join(dir, files.part(c.name)), { force: true }).catch(() => undefined);
    await rm(join(dir, files.part(files.detsLog(c.name))), { force: true }).catch(() => undefined);
    this.fail(err);
  }

  private fail(err: unknown): void {
    const e = err as NodeJS.ErrnoException;
    this.lastError = { at: new Date().toISOString(), message: e.code ? `${e.code}: ${e.message}` : String(e.message ?? err) };
  }
}

export async function syncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
