import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LookoutError, toLookoutError } from 'lookout/core';
import { AdmissionQueue, type BusyError } from 'lookout/lib/limits';
import { runFfmpeg } from 'lookout/lib/media';
import { transcodeArgs, VARIANT_SUFFIX, type ClipVariant } from './transcode-args.js';

/** A finished mp4 in the cache. */
export interface CachedClip {
  path: string;
  size: number;
  etag: string;
  mtimeMs: number;
}

/** The source chunk, fetched for one build and released after it. */
export interface ClipSource {
  path: string;
  /** Frames per second from the chunk's sidecar (a raw stream has none of its own). */
  fps: number;
  release(): Promise<void>;
}

export interface TranscodeInfo {
  key: string;
  variant: ClipVariant;
  ms: number;
  bytes: number;
}

export interface TranscodeCacheOptions {
  dir: string;
  maxBytes: number;
  /** ffmpeg processes at once; further builds wait. */
  concurrency: number;
  /** Builds that may wait for one of those; one more is refused with device_busy (429). Default 64. */
  maxQueued?: number;
  timeoutMs: number;
  preset?: string;
  /** Called after each ffmpeg run that produced a clip (the ring records it; tests count them). */
  onTranscode?: (info: TranscodeInfo) => void;
  signal?: AbortSignal;
}

export interface CacheStats {
  entries: number;
  bytes: number;
  maxBytes: number;
  transcodes: number;
  hits: number;
  misses: number;
  failures: number;
  evictions: number;
  active: number;
  queued: number;
}

interface Build {
  promise: Promise<CachedClip>;
  /** Requests waiting on it that may still go away; when the last goes, a build still queued leaves the queue. */
  waiters: number;
  abort: AbortController;
}

interface Entry {
  file: string;
  size: number;
  mtimeMs: number;
  lastUsed: number;
}

const TMP_SUFFIX = '.tmp';

/**
 * mp4s built from chunks, on disk under a size bound, least recently used evicted first. A chunk
 * name is immutable once the recorder renamed it into place, so a built clip never goes stale.
 *
 * One build per clip however many requests arrive together (they share its promise); builds are
 * written to a temporary name and renamed, so a reader never opens a half-written mp4, and the
 * temporary files a crash left are removed at start. A failed build is not cached: the next
 * request tries again.
 */
export class TranscodeCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Build>();
  private readonly limiter: AdmissionQueue;
  private readonly busy: BusyError;
  private bytes = 0;
  private counters = { transcodes: 0, hits: 0, misses: 0, failures: 0, evictions: 0 };
  private clock = 0;
  /** Evictions run one after another: two at once would each remove the same least used entry. */
  private evicting: Promise<void> = Promise.resolve();

  constructor(private readonly options: TranscodeCacheOptions) {
    this.limiter = new AdmissionQueue({ concurrency: options.concurrency, maxWaiting: options.maxQueued ?? 64 });
    this.busy = (active, queued) =>
      new LookoutError(
        'device_busy',
        `the hub is building ${active} clips and has ${queued} more waiting, as many as it takes (LOOKOUT_MEDIA_TRANSCODE_QUEUE); retry later`,
        { details: { active, queued } },
      );
  }

  /** Creates the folder, drops leftovers of interrupted builds and indexes the clips already there. */
  async init(): Promise<void> {
    await mkdir(this.options.dir, { recursive: true });
    const found: Entry[] = [];
    for (const name of await readdir(this.options.dir)) {
      const full = join(this.options.dir, name);
      if (name.endsWith(TMP_SUFFIX)) {
        await rm(full, { force: true });
        continue;
      }
      if (!name.endsWith('.mp4')) continue;
      const s = await stat(full).catch(() => undefined);
      if (s?.isFile()) found.push({ file: name, size: s.size, mtimeMs: s.mtimeMs, lastUsed: s.atimeMs });
    }
    // Oldest use first, so the order of `lastUsed` ticks follows the files' access times.
    found.sort((a, b) => a.lastUsed - b.lastUsed);
    for (const e of found) this.add({ ...e, lastUsed: ++this.clock });
    await this.evict();
  }

  /** The clip when it is built already (a cache hit touches it). */
  peek(key: string, variant: ClipVariant): CachedClip | undefined {
    const e = this.entries.get(fileNameOf(key, variant));
    if (!e) return undefined;
    e.lastUsed = ++this.clock;
    return this.clipOf(e);
  }

  /**
   * The clip of `key` (`<device>/<chunk>`), built from `source()` when not cached. `source` runs
   * only for the one build, inside the concurrency bound. A request whose `signal` aborts stops
   * waiting; a build all its requests left while it was still queued is dropped from the queue (one
   * already running finishes and is cached). Past the queue bound: device_busy (429).
   */
  get(key: string, variant: ClipVariant, source: () => Promise<ClipSource>, signal?: AbortSignal): Promise<CachedClip> {
    const hit = this.peek(key, variant);
    if (hit) {
      this.counters.hits++;
      return Promise.resolve(hit);
    }
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    const file = fileNameOf(key, variant);
    let build = this.inFlight.get(file);
    if (build) this.counters.hits++;
    else {
      this.counters.misses++;
      const abort = new AbortController();
      const b: Build = { waiters: 0, abort, promise: Promise.resolve(undefined as unknown as CachedClip) };
      b.promise = this.limiter
        .run(() => this.build(key, variant, file, source), abort.signal, this.busy)
        .finally(() => {
          if (this.inFlight.get(file) === b) this.inFlight.delete(file);
        });
      this.inFlight.set(file, b);
      build = b;
    }
    return awaitBuild(build, signal);
  }

  /** Forgets a clip whose file went away under us (removed by hand): the next get builds it again. */
  forget(key: string, variant: ClipVariant): void {
    const file = fileNameOf(key, variant);
    const e = this.entries.get(file);
    if (e) {
      this.entries.delete(file);
      this.bytes -= e.size;
    }
  }

  stats(): CacheStats {
    return {
      entries: this.entries.size,
      bytes: this.bytes,
      maxBytes: this.options.maxBytes,
      ...this.counters,
      active: this.limiter.active,
      queued: this.limiter.waiting,
    };
  }

  private async build(key: string, variant: ClipVariant, file: string, source: () => Promise<ClipSource>): Promise<CachedClip> {
    // Built meanwhile by a request that got here first and finished while this one queued.
    const done = this.entries.get(file);
    if (done) return this.clipOf(done);
    const target = join(this.options.dir, file);
    const tmp = `${target}.${randomBytes(4).toString('hex')}${TMP_SUFFIX}`;
    const started = Date.now();
    let src: ClipSource | undefined;
    try {
      src = await source();
      await transcode(variant, src, tmp, this.options);
      const s = await stat(tmp);
      if (s.size === 0) throw new LookoutError('recording_unreadable', `${key}: ffmpeg found no picture in the chunk`);
      await rename(tmp, target);
      this.counters.transcodes++;
      const entry: Entry = { file, size: s.size, mtimeMs: s.mtimeMs, lastUsed: ++this.clock };
      this.add(entry);
      this.options.onTranscode?.({ key, variant, ms: Date.now() - started, bytes: s.size });
      await this.evict(file);
      return this.clipOf(entry);
    } catch (err) {
      this.counters.failures++;
      await rm(tmp, { force: true }).catch(() => undefined);
      throw toLookoutError(err);
    } finally {
      await src?.release().catch(() => undefined);
    }
  }

  private add(e: Entry): void {
    const previous = this.entries.get(e.file);
    if (previous) this.bytes -= previous.size;
    this.entries.set(e.file, e);
    this.bytes += e.size;
  }

  /** Least recently used first, until the bound holds; `keep` (the clip just built) stays even when alone over it. */
  private evict(keep?: string): Promise<void> {
    const run = this.evicting.then(() => this.evictNow(keep));
    this.evicting = run.catch(() => undefined);
    return run;
  }

  /**
   * One pass. A clip being served is not broken by it: clipReply opens the file before answering
   * and streams from that descriptor, and an unlinked file lives until it is closed; a clip removed
   * between lookup and open is built again (clip-route, pull-recording).
   */
  private async evictNow(keep: string | undefined): Promise<void> {
    if (this.bytes <= this.options.maxBytes) return;
    const byUse = [...this.entries.values()].sort((a, b) => a.lastUsed - b.lastUsed);
    for (const e of byUse) {
      if (this.bytes <= this.options.maxBytes) break;
      if (e.file === keep) continue;
      // Gone meanwhile (forgotten, or rebuilt under its name while a removal was awaited): not this pass's.
      if (this.entries.get(e.file) !== e) continue;
      this.entries.delete(e.file);
      this.bytes -= e.size;
      this.counters.evictions++;
      // A reader that opened it already keeps reading: an unlinked file lives until it is closed.
      await rm(join(this.options.dir, e.file), { force: true }).catch(() => undefined);
    }
  }

  private clipOf(e: Entry): CachedClip {
    return { path: join(this.options.dir, e.file), size: e.size, mtimeMs: e.mtimeMs, etag: `"${e.size.toString(16)}-${Math.floor(e.mtimeMs).toString(16)}"` };
  }
}

/** `build` as one request sees it: its own abort ends its wait, the last one's abort drops a queued build. */
function awaitBuild(build: Build, signal: AbortSignal | undefined): Promise<CachedClip> {
  build.waiters++;
  if (!signal) {
    // A request that cannot go away keeps the build wanted for good.
    build.waiters = Number.POSITIVE_INFINITY;
    return build.promise;
  }
  return new Promise<CachedClip>((resolve, reject) => {
    const onAbort = () => {
      if (--build.waiters === 0) build.abort.abort(signal.reason);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    build.promise.then(
      (clip) => {
        signal.removeEventListener('abort', onAbort);
        resolve(clip);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** A cache file name per clip: hashed, so no device id or chunk name ever becomes a path here. */
export function fileNameOf(key: string, variant: ClipVariant): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 40) + VARIANT_SUFFIX[variant];
}

/**
 * Runs ffmpeg on the source. Its failure on a chunk is the chunk's (truncated to nothing, not
 * H.265): recording_unreadable with ffmpeg's own words; running out of time is transcode_failed.
 */
async function transcode(variant: ClipVariant, src: ClipSource, output: string, o: TranscodeCacheOptions): Promise<void> {
  const args = transcodeArgs(variant, src.path, output, src.fps, o.preset);
  try {
    await runFfmpeg(args, { timeoutMs: o.timeoutMs, ...(o.signal ? { signal: o.signal } : {}) }, 'recording_unreadable');
  } catch (err) {
    const e = toLookoutError(err);
    if (/did not finish|cancelled|could not run/.test(e.message)) throw new LookoutError('transcode_failed', e.message, { cause: e });
    throw new LookoutError('recording_unreadable', `the chunk cannot be played: ${e.message}`, { cause: e, details: e.details });
  }
}
