import { Worker } from 'node:worker_threads';
import { LookoutError } from 'lookout/core';
import type { CropBox, CropRead, OpenedReply, WorkerError, WorkerReply, WorkerRequest } from './worker-protocol.js';

export interface OcrWorkerOptions {
  encoderPath: string;
  decoderPath: string;
  threads: number;
  /** How long a close may take before the thread is terminated. */
  closeTimeoutMs?: number;
}

/** A worker's error as the cascade reports it: its code (TROCR_DLC_FW_CRASH is `trocr.dlc_fw_crash`) and the mismatches named. */
export function workerError(error: WorkerError): LookoutError {
  return new LookoutError(error.code as LookoutError['code'], error.message, {
    details: { ...(error.code === 'trocr.dlc_fw_crash' ? { load_report: 'TROCR_DLC_FW_CRASH' } : {}), mismatches: error.mismatches ?? [] },
  });
}

/**
 * The main thread's side of the cascade's worker thread: open, then one read at a time. A thread
 * that dies (an exception outside a request, an exit) fails what is waiting with TROCR_DLC_FW_CRASH.
 */
export class OcrWorker {
  private pending: { resolve: (r: WorkerReply) => void; reject: (e: LookoutError) => void } | undefined;
  private exited: LookoutError | undefined;
  private job = 0;
  private busyWith: Promise<unknown> | undefined;

  private constructor(
    private readonly thread: Worker,
    readonly opened: OpenedReply,
    private readonly options: OcrWorkerOptions,
  ) {}

  static async open(options: OcrWorkerOptions): Promise<OcrWorker> {
    const thread = new Worker(new URL('./cascade-worker.js', import.meta.url));
    const holder: { worker?: OcrWorker } = {};
    let first: ((r: WorkerReply | LookoutError) => void) | undefined;
    const died = (why: string) =>
      new LookoutError('trocr.dlc_fw_crash', `TROCR_DLC_FW_CRASH: the text cascade's thread ${why}`, { details: { load_report: 'TROCR_DLC_FW_CRASH' } });
    thread.on('message', (m: WorkerReply) => (holder.worker ? holder.worker.settle(m) : first?.(m)));
    thread.on('error', (err) => (holder.worker ? holder.worker.die(died(`failed: ${err.message}`)) : first?.(died(`failed: ${err.message}`))));
    thread.on('exit', (code) => (holder.worker ? holder.worker.die(died(`exited (${code})`)) : first?.(died(`exited (${code}) while opening`))));
    const answer = await new Promise<WorkerReply | LookoutError>((resolve) => {
      first = resolve;
      thread.postMessage({
        kind: 'open',
        encoderPath: options.encoderPath,
        decoderPath: options.decoderPath,
        threads: options.threads,
      } satisfies WorkerRequest);
    });
    if (answer instanceof LookoutError || answer.kind !== 'opened') {
      await thread.terminate();
      throw answer instanceof LookoutError ? answer : answer.kind === 'failed' ? workerError(answer.error) : died(`answered ${answer.kind} to open`);
    }
    holder.worker = new OcrWorker(thread, answer, options);
    return holder.worker;
  }

  /** True while a read is in flight: the cascade drops crops then rather than queue them. */
  get busy(): boolean {
    return this.busyWith !== undefined;
  }

  /** Crops `boxes` out of the frame (a copy is sent) and reads them. */
  read(frame: { width: number; height: number; data: Uint8Array }, boxes: CropBox[]): Promise<CropRead[]> {
    if (this.exited) return Promise.reject(this.exited);
    if (this.pending) return Promise.reject(new LookoutError('internal', 'the text cascade reads one frame at a time'));
    const job = ++this.job;
    const copy = frame.data.slice();
    const answer = new Promise<WorkerReply>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.thread.postMessage({ kind: 'read', job, frame: { width: frame.width, height: frame.height, data: copy }, boxes } satisfies WorkerRequest, [
        copy.buffer,
      ]);
    });
    const result = answer.then((r) => {
      if (r.kind === 'read' && r.job === job) return r.reads;
      if (r.kind === 'failed') throw workerError(r.error);
      throw new LookoutError('internal', `the text cascade's thread answered ${r.kind} to read ${job}`);
    });
    const done = result.finally(() => {
      this.busyWith = undefined;
    });
    this.busyWith = done.catch(() => undefined);
    return done;
  }

  /** Releases the sessions and ends the thread (terminated if it does not answer in time). */
  async close(): Promise<void> {
    if (this.exited) return;
    await this.busyWith;
    const closed = new Promise<void>((resolve) => {
      this.pending = { resolve: () => resolve(), reject: () => resolve() };
      this.thread.postMessage({ kind: 'close' } satisfies WorkerRequest);
    });
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, this.options.closeTimeoutMs ?? 2000).unref());
    await Promise.race([closed, timeout]);
    this.exited = new LookoutError('internal', 'the text cascade is closed');
    await this.thread.terminate();
  }

  /** Ends the thread at once (fail closed: nothing more runs on graphs that crashed). */
  async terminate(): Promise<void> {
    this.exited ??= new LookoutError('internal', 'the text cascade was stopped');
    this.pending?.reject(this.exited);
    this.pending = undefined;
    await this.thread.terminate();
  }

  private settle(reply: WorkerReply): void {
    const p = this.pending;
    this.pending = undefined;
    p?.resolve(reply);
  }

  private die(error: LookoutError): void {
    if (this.exited) return;
    this.exited = error;
    this.pending?.reject(error);
    this.pending = undefined;
  }
}
