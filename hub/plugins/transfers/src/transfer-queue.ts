import { randomBytes } from 'node:crypto';
import { copyFile, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ERROR_CODES, LookoutError, toLookoutError, type AnyErrorCode } from 'lookout/core';
import type { EnqueuePull, EnqueueUpload, Puller, TransferFilter, TransferQueue, Uploader } from './service.js';
import { FINISHED_STATES, TRANSFER_STATES, TransferSchema, type Transfer, type TransferState } from './transfer-schemas.js';
import { backoffMs, TransferRate } from './transfer-rate.js';

export interface QueueOptions {
  /** Where partial and pulled files are kept (`<id>.part`, `<id>.data`). */
  dir: string;
  concurrency: number;
  perDevice: number;
  maxAttempts: number;
  backoffMs: number;
  backoffMaxMs: number;
  /** Queued and running transfers held at once; more are refused. */
  maxActive: number;
  /** Finished transfers kept listed (with their files); the oldest go first. */
  keepFinished: number;
  /** Bytes the folder may hold: past it, the files of the oldest finished transfers go (they stay listed, without their file). */
  maxBytes?: number;
  /** Sends an upload's file (tusUpload); without one, uploads wait queued. */
  uploader?: Uploader;
  /** Bytes per PATCH of an upload. */
  uploadChunkBytes?: number;
  /** A transfer changed (the hub state saves the queue). */
  onChange: () => void;
  /** A transfer changed state (the debug ring records it: /fleet/events carries it). */
  onState: (t: Transfer) => void;
}

/** What the hub state keeps. */
export const QueueSnapshotSchema = z.object({ version: z.literal(1), transfers: z.array(TransferSchema) });
export type QueueSnapshot = z.infer<typeof QueueSnapshotSchema>;

const ORPHAN_AGE_MS = 3_600_000;

/** Failures that say the transfer cannot succeed however often it is tried. */
const PERMANENT = new Set(['recording_not_found', 'bad_request', 'target_unknown', 'payload_too_large']);

interface Running {
  abort: AbortController;
  /** Stopped by its puller's removal, not failed. */
  interrupted: boolean;
  rate: TransferRate;
  done: Promise<void>;
}

/**
 * The transfer queue: transfers by id in creation order, started oldest first while the bounds
 * allow (in all and per device), each attempt handed to the installed puller with the partial file
 * of the attempts before; a failed attempt is tried again after an exponential backoff until
 * `maxAttempts`, then the transfer is failed with the last reason. Every change is reported so the
 * hub state keeps the queue: a transfer that ran when the hub stopped is queued again at start and
 * resumes from its partial file.
 */
export class FileTransferQueue implements TransferQueue {
  private readonly items = new Map<string, Transfer>();
  private readonly running = new Map<string, Running>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly wakeAt = new Set<number>();
  private puller: Puller | undefined;
  private closed = false;
  /** The byte bound's sweeps, one after the other. */
  private sweeping: Promise<void> = Promise.resolve();

  constructor(private readonly o: QueueOptions) {}

  /** Loads a saved queue (a transfer that ran is queued again) and removes files no transfer owns. */
  async init(saved: QueueSnapshot | undefined): Promise<void> {
    await mkdir(this.o.dir, { recursive: true });
    for (const t of saved?.transfers ?? []) {
      if (t.state === 'running') Object.assign(t, { state: 'queued', rate_bps: null, next_attempt_at: null });
      this.items.set(t.id, t);
    }
    for (const name of await readdir(this.o.dir)) {
      const m = /^(t-[0-9a-f]{16})\.(part|data)$/.exec(name);
      if (!m) continue;
      const t = this.items.get(m[1]);
      if (t !== undefined ? (m[2] === 'part' ? t.state !== 'done' : t.stored) : !(await staleFile(join(this.o.dir, name)))) continue;
      await rm(join(this.o.dir, name), { force: true });
    }
    for (const t of this.items.values()) if (t.state === 'queued' && t.next_attempt_at) this.wake(Date.parse(t.next_attempt_at) - Date.now());
  }

  snapshot(): QueueSnapshot {
    return { version: 1, transfers: [...this.items.values()] };
  }

  hasPuller(): boolean {
    return this.puller !== undefined;
  }

  setPuller(puller: Puller): () => void {
    this.puller = puller;
    this.pump();
    return () => {
      if (this.puller !== puller) return;
      this.puller = undefined;
      // Its plugin stops: what it was pulling waits queued (resumed when a puller is installed again, or after a restart).
      for (const [id, r] of this.running) {
        if (this.items.get(id)?.kind !== 'pull') continue; // uploads do not need it
        r.interrupted = true;
        r.abort.abort(new LookoutError('service_unavailable', 'the plugin that pulls recordings stopped'));
      }
    };
  }

  enqueue(pull: EnqueuePull): Transfer {
    this.admit();
    const t = this.fresh('pull', pull.deviceId, pull.chunk, pull.origin);
    this.items.set(t.id, t);
    this.changed(t, true);
    this.pump();
    return { ...t };
  }

  async enqueueUpload(upload: EnqueueUpload): Promise<Transfer> {
    this.admit();
    const from = this.must(upload.from);
    if (from.kind !== 'pull' || from.state !== 'done' || !from.stored) {
      throw new LookoutError('transfers.transfer_not_done', `transfer ${from.id} holds no pulled file to upload (${from.kind}, ${from.state})`);
    }
    const t = this.fresh('upload', from.device_id, from.chunk, upload.origin);
    Object.assign(t, { upload_of: from.id, destination: upload.destination, bytes_total: from.bytes_total, stored: true });
    // The upload's own link to the pulled file: the pull may be taken or evicted meanwhile, the upload keeps its bytes.
    await link(this.dataPath(from.id), this.dataPath(t.id)).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new LookoutError('transfers.transfer_not_done', `transfer ${from.id}'s file is gone`);
      await copyFile(this.dataPath(from.id), this.dataPath(t.id));
    });
    this.admit();
    this.items.set(t.id, t);
    this.changed(t, true);
    this.pump();
    return { ...t };
  }

  /** Refuses a new transfer when the queue stops or holds its bound of active ones. */
  private admit(): void {
    if (this.closed) throw new LookoutError('service_unavailable', 'the transfer queue is stopping');
    const active = this.count('queued') + this.count('running');
    if (active >= this.o.maxActive) {
      throw new LookoutError('device_busy', `the transfer queue holds ${active} active transfers, its bound (LOOKOUT_TRANSFERS_MAX_ACTIVE): retry later`);
    }
  }

  private fresh(kind: Transfer['kind'], deviceId: string, chunk: string, origin: Transfer['origin']): Transfer {
    const now = new Date().toISOString();
    return {
      id: `t-${randomBytes(8).toString('hex')}`,
      kind,
      device_id: deviceId,
      chunk,
      origin,
      state: 'queued',
      attempts: 0,
      max_attempts: this.o.maxAttempts,
      bytes_done: 0,
      bytes_total: null,
      rate_bps: null,
      resumed_from: null,
      source: null,
      error: null,
      next_attempt_at: null,
      created_at: now,
      started_at: null,
      finished_at: null,
      updated_at: now,
      etag: null,
      stored: false,
      upload_of: null,
      destination: null,
      upload_url: null,
    };
  }

  get(id: string): Transfer | undefined {
    const t = this.items.get(id);
    return t && this.view(t);
  }

  list(filter: TransferFilter = {}): Transfer[] {
    const out: Transfer[] = [];
    const all = [...this.items.values()];
    for (let i = all.length - 1; i >= 0 && out.length < (filter.limit ?? Infinity); i--) {
      const t = all[i];
      if ((filter.state === undefined || t.state === filter.state) && (filter.device === undefined || t.device_id === filter.device)) out.push(this.view(t));
    }
    return out;
  }

  counts(): Record<TransferState, number> {
    return Object.fromEntries(TRANSFER_STATES.map((s) => [s, this.count(s)])) as Record<TransferState, number>;
  }

  cancel(id: string): Transfer {
    const t = this.must(id);
    if (FINISHED_STATES.includes(t.state)) throw new LookoutError('transfers.transfer_finished', `transfer ${id} is ${t.state} already: nothing to cancel`);
    const run = this.running.get(id);
    this.finish(t, 'cancelled');
    if (run) {
      run.abort.abort(new LookoutError('transfers.transfer_finished', 'cancelled'));
      // The attempt closes its file first: the partial file is removed once it has.
      void run.done.then(() => this.removeFiles(t));
    } else void this.removeFiles(t);
    this.pump();
    return { ...t };
  }

  retry(id: string): Transfer {
    const t = this.must(id);
    if (t.state === 'done') throw new LookoutError('transfers.transfer_finished', `transfer ${id} is done: nothing to retry`);
    if (t.state === 'failed' || t.state === 'cancelled') {
      Object.assign(t, { state: 'queued', attempts: 0, error: null, finished_at: null, next_attempt_at: null, rate_bps: null });
      this.changed(t, true);
    } else if (t.state === 'queued' && t.next_attempt_at) {
      // Waiting out its backoff: tried now.
      t.next_attempt_at = null;
      this.changed(t, false);
    }
    this.pump();
    return { ...t };
  }

  settled(id: string, signal?: AbortSignal): Promise<Transfer> {
    const t = this.must(id);
    if (FINISHED_STATES.includes(t.state)) return Promise.resolve({ ...t });
    return new Promise<Transfer>((resolve, reject) => {
      const set = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, set);
      const onAbort = () => {
        set.delete(wake);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('the wait was aborted'));
      };
      const wake = () => {
        signal?.removeEventListener('abort', onAbort);
        const now = this.items.get(id);
        if (now) resolve({ ...now });
        else reject(new LookoutError('transfers.transfer_not_found', `no transfer ${id}`));
      };
      set.add(wake);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async take(id: string, dest: string): Promise<void> {
    const t = this.must(id);
    if (t.kind !== 'pull' || t.state !== 'done' || !t.stored)
      throw new LookoutError('transfers.transfer_not_done', `transfer ${id} holds no pulled file (${t.kind}, ${t.state})`);
    t.stored = false;
    const from = this.dataPath(id);
    await rename(from, dest).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EXDEV') throw err;
      // Another file system (a media cache elsewhere): copied, then removed here.
      await copyFile(from, dest);
      await rm(from, { force: true });
    });
    this.changed(t, false);
  }

  failure(t: Transfer): LookoutError {
    if (t.state === 'cancelled') return new LookoutError('transfers.transfer_finished', `transfer ${t.id} of ${t.device_id}/${t.chunk} was cancelled`);
    const e = t.error ?? { code: 'internal', message: `transfer ${t.id} ended ${t.state}` };
    return new LookoutError(asErrorCode(e.code), e.message, { details: { transfer: t.id, attempts: t.attempts } });
  }

  /** Stops starting transfers and stops those running; their state is saved as running, so a restart resumes them. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.wakeAt.clear();
    const runs = [...this.running.values()];
    for (const r of runs) r.abort.abort(new LookoutError('service_unavailable', 'the hub stops'));
    await Promise.all(runs.map((r) => r.done));
    await this.sweeping;
  }

  private pump(): void {
    if (this.closed) return;
    const now = Date.now();
    let nextDue = Infinity;
    for (const t of this.items.values()) {
      if (this.running.size >= this.o.concurrency) break;
      if (t.state !== 'queued') continue;
      const due = t.next_attempt_at ? Date.parse(t.next_attempt_at) : 0;
      if (due > now) {
        nextDue = Math.min(nextDue, due);
        continue;
      }
      if (t.kind === 'upload') {
        // An upload does not use the device's link: only the bound in all applies.
        if (this.o.uploader) this.start(t, () => this.upload(t, this.o.uploader!, this.running.get(t.id)!));
        continue;
      }
      if (!this.puller || this.runningOf(t.device_id) >= this.o.perDevice) continue;
      const puller = this.puller;
      this.start(t, () => this.attempt(t, puller, this.running.get(t.id)!));
    }
    // A timer may fire a little before the wall clock says its time came: the earliest backoff still ahead wakes the queue again.
    if (nextDue !== Infinity) this.wake(nextDue - now + 1);
  }

  private start(t: Transfer, attempt: () => Promise<void>): void {
    const abort = new AbortController();
    const rate = new TransferRate();
    const run: Running = { abort, rate, interrupted: false, done: Promise.resolve() };
    this.running.set(t.id, run);
    Object.assign(t, { state: 'running', attempts: t.attempts + 1, next_attempt_at: null, rate_bps: null });
    t.started_at ??= new Date().toISOString();
    run.done = attempt().finally(() => {
      this.running.delete(t.id);
      this.pump();
    });
  }

  private async attempt(t: Transfer, puller: Puller, run: Running): Promise<void> {
    const partPath = join(this.o.dir, `${t.id}.part`);
    const from = (await stat(partPath).catch(() => undefined))?.size ?? 0;
    t.bytes_done = from;
    t.resumed_from = from > 0 ? from : null;
    this.changed(t, true);
    try {
      const out = await puller({
        id: t.id,
        deviceId: t.device_id,
        chunk: t.chunk,
        path: this.dataPath(t.id),
        partPath,
        etag: t.etag ?? undefined,
        signal: run.abort.signal,
        progress: this.progressOf(t, run),
        setEtag: (etag) => {
          t.etag = etag ?? null;
          this.changed(t, false);
        },
      });
      if (t.state !== 'running') return void (await this.removeFiles(t)); // cancelled as it ended
      const size = (await stat(this.dataPath(t.id))).size;
      Object.assign(t, {
        bytes_done: size,
        bytes_total: size,
        source: out.source,
        resumed_from: out.resumedFrom > 0 ? out.resumedFrom : null,
        error: null,
        stored: true,
      });
      this.finish(t, 'done');
      this.evict();
    } catch (err) {
      this.attemptFailed(t, run, err);
    }
  }

  /** The progress callback of a running attempt: bytes and rate while it runs, nothing once it was cancelled. */
  private progressOf(t: Transfer, run: Running): (done: number, total?: number) => void {
    return (done, total) => {
      if (t.state !== 'running') return;
      run.rate.add(Date.now(), done);
      Object.assign(t, { bytes_done: done, bytes_total: total ?? t.bytes_total, rate_bps: run.rate.perSecond() });
      this.changed(t, false);
    };
  }

  /** One attempt of an upload: the file the upload links to, sent from the destination's offset when an attempt before created it there. */
  private async upload(t: Transfer, uploader: Uploader, run: Running): Promise<void> {
    const file = this.dataPath(t.id);
    t.resumed_from = null;
    this.changed(t, true);
    try {
      if (!t.stored || !(await stat(file).catch(() => undefined))) {
        throw new LookoutError(
          'transfers.transfer_not_done',
          `upload ${t.id} no longer holds the file of ${t.upload_of ?? '?'} (cancelled uploads drop it): upload the pull again`,
          {
            details: { retryable: false },
          },
        );
      }
      const out = await uploader({
        id: t.id,
        file,
        name: t.chunk,
        endpoint: t.destination ?? '',
        uploadUrl: t.upload_url ?? undefined,
        chunkBytes: this.o.uploadChunkBytes ?? 8 * 1024 * 1024,
        signal: run.abort.signal,
        progress: this.progressOf(t, run),
        setUploadUrl: (url) => {
          t.upload_url = url;
          this.changed(t, false);
        },
      });
      if (t.state !== 'running') return; // cancelled as it ended
      // Sent: the hub's copy is not needed any more (the pull it came from keeps its own).
      await rm(file, { force: true });
      Object.assign(t, {
        bytes_done: t.bytes_total ?? t.bytes_done,
        source: out.source,
        resumed_from: out.resumedFrom > 0 ? out.resumedFrom : null,
        upload_url: out.url,
        error: null,
        stored: false,
      });
      this.finish(t, 'done');
      this.evict();
    } catch (err) {
      this.attemptFailed(t, run, err);
    }
  }

  /** A failed attempt: queued again after the backoff while attempts are left and the failure may pass, else failed. */
  private attemptFailed(t: Transfer, run: Running, err: unknown): void {
    if (t.state !== 'running' || this.closed) return; // cancelled, or the hub stops: the state says what happens next
    const e = toLookoutError(err);
    const details = e.details as { retryable?: unknown; interrupted?: unknown } | undefined;
    if (run.interrupted || details?.interrupted === true) {
      // Not a failure: the puller's plugin stops. Queued again, resumed from what came.
      Object.assign(t, { state: 'queued', rate_bps: null });
      return this.changed(t, true);
    }
    t.error = { code: e.code, message: e.message.slice(0, 500) };
    const retryable = details?.retryable !== false && !PERMANENT.has(e.code);
    if (retryable && t.attempts < t.max_attempts) {
      const wait = backoffMs(t.attempts, this.o.backoffMs, this.o.backoffMaxMs);
      Object.assign(t, { state: 'queued', rate_bps: null, next_attempt_at: new Date(Date.now() + wait).toISOString() });
      this.changed(t, true);
      this.wake(wait);
    } else {
      this.finish(t, 'failed');
      this.evict();
    }
  }

  private finish(t: Transfer, state: 'done' | 'failed' | 'cancelled'): void {
    Object.assign(t, { state, finished_at: new Date().toISOString(), rate_bps: null, next_attempt_at: null });
    this.changed(t, true);
    const set = this.waiters.get(t.id);
    this.waiters.delete(t.id);
    for (const wake of set ?? []) wake();
  }

  /** Finished transfers past the bound go, oldest first, with their files; then files past the byte bound. */
  private evict(): void {
    this.evictCount();
    if (this.o.maxBytes !== undefined) this.sweeping = this.sweeping.then(() => this.evictBytes(this.o.maxBytes!)).catch(() => undefined);
  }

  /** Resolves once the byte bound's sweeps so far have run (tests, close). */
  swept(): Promise<void> {
    return this.sweeping;
  }

  private evictCount(): void {
    let finished = this.items.size - this.count('queued') - this.count('running');
    for (const t of this.items.values()) {
      if (finished <= this.o.keepFinished) return;
      if (!FINISHED_STATES.includes(t.state)) continue;
      this.items.delete(t.id);
      void this.removeFiles(t);
      finished--;
    }
    this.o.onChange();
  }

  /**
   * While the folder holds more than `max` bytes, the files of finished transfers go, the oldest
   * finished first: a done pull's file (it stays listed, `stored: false`, as when taken), a failed or
   * cancelled one's partial file (a retry starts over). Running and queued transfers keep theirs.
   */
  private async evictBytes(max: number): Promise<void> {
    const sizes = new Map<string, number>();
    let total = 0;
    // An upload's file is a link to its pull's: counted once, as the disk holds it once.
    const inodes = new Set<number>();
    for (const name of await readdir(this.o.dir)) {
      const s = await stat(join(this.o.dir, name)).catch(() => undefined);
      const size = s === undefined || inodes.has(s.ino) ? 0 : s.size;
      if (s) inodes.add(s.ino);
      total += size;
      const id = /^(t-[0-9a-f]{16})\.(part|data)$/.exec(name)?.[1];
      if (id !== undefined) sizes.set(id, (sizes.get(id) ?? 0) + size);
    }
    if (total <= max) return;
    const finished = [...this.items.values()]
      .filter((t) => FINISHED_STATES.includes(t.state) && (sizes.get(t.id) ?? 0) > 0)
      .sort((a, b) => (a.finished_at ?? '').localeCompare(b.finished_at ?? ''));
    for (const t of finished) {
      if (total <= max) break;
      if (!FINISHED_STATES.includes(t.state)) continue; // retried meanwhile
      await rm(join(this.o.dir, `${t.id}.part`), { force: true });
      await rm(this.dataPath(t.id), { force: true });
      total -= sizes.get(t.id) ?? 0;
      if (t.stored) {
        t.stored = false;
        this.changed(t, false);
      }
    }
  }

  private wake(ms: number): void {
    const at = Date.now() + Math.max(0, ms);
    // One timer per moment is enough (pump schedules the earliest backoff again each time it runs).
    if (this.wakeAt.has(at)) return;
    this.wakeAt.add(at);
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        this.wakeAt.delete(at);
        this.pump();
      },
      Math.max(0, ms),
    );
    this.timers.add(timer);
  }

  private async removeFiles(t: Transfer): Promise<void> {
    await rm(join(this.o.dir, `${t.id}.part`), { force: true });
    if (t.state !== 'done' || !this.items.has(t.id)) {
      await rm(this.dataPath(t.id), { force: true });
      if (t.kind === 'upload') t.stored = false;
    }
    if (t.stored && !this.items.has(t.id)) t.stored = false;
  }

  private changed(t: Transfer, stateChanged: boolean): void {
    t.updated_at = new Date().toISOString();
    this.o.onChange();
    if (stateChanged) this.o.onState({ ...t });
  }

  /** A copy to answer, a running transfer's rate as of now (a stalled one's falls to 0). */
  private view(t: Transfer): Transfer {
    const run = this.running.get(t.id);
    return run && t.state === 'running' ? { ...t, rate_bps: run.rate.perSecond(Date.now()) ?? t.rate_bps } : { ...t };
  }

  private dataPath(id: string): string {
    return join(this.o.dir, `${id}.data`);
  }

  private must(id: string): Transfer {
    const t = this.items.get(id);
    if (!t) throw new LookoutError('transfers.transfer_not_found', `no transfer ${JSON.stringify(id.slice(0, 80))}`);
    return t;
  }

  private count(state: TransferState): number {
    let n = 0;
    for (const t of this.items.values()) if (t.state === state) n++;
    return n;
  }

  private runningOf(deviceId: string): number {
    let n = 0;
    for (const id of this.running.keys()) {
      const t = this.items.get(id);
      if (t?.kind === 'pull' && t.device_id === deviceId) n++;
    }
    return n;
  }
}

/** A code kept in the state as a string: a core code or a plugin's namespaced one, else internal. */
function asErrorCode(code: string): AnyErrorCode {
  return code in ERROR_CODES || /^[a-z0-9-]+\.[a-z0-9_]+$/.test(code) ? (code as AnyErrorCode) : 'internal';
}

/**
 * A file no saved transfer owns is removed once it is an hour old: the leftover of a hub that
 * stopped before it saved its queue. A younger one may be another hub's sharing the folder (tests).
 */
async function staleFile(path: string): Promise<boolean> {
  const s = await stat(path).catch(() => undefined);
  return s !== undefined && Date.now() - s.mtimeMs > ORPHAN_AGE_MS;
}
