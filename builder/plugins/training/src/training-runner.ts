import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LookoutError, toLookoutError } from 'lookout/core';
import type { Job, JobStore } from 'lookout/builder-plugins/store';
import { onnxInputShape, shapeText, type TrainResult } from './service.js';
import type { LaunchRequest } from './training-schemas.js';
import type { Recipe, TrainExecutor, TrainOutcome, TrainRun } from './executors/train-executor.js';

/** A train job's params as stored: the launch body with the recipe's side and the compiled labels. */
export type TrainParams = LaunchRequest & { input_size: number; classes: string[]; ontology_hash?: string };

const STOPPING = 'builder stopping';

export interface RunnerOptions {
  jobs: JobStore;
  executors: Record<string, TrainExecutor>;
  recipes: Record<string, Recipe>;
  dataDir: string;
  maxRunning: number;
  timeLimitS: number;
  onInternalError: (err: unknown, jobId: string) => void;
}

/**
 * Moves train jobs through their states: QUEUED jobs start as slots free (oldest first), each
 * TRAINING job runs on its executor under a time limit and ends TRAINING_COMPLETE (its export's shape
 * checked) or FAILED with the reason. A builder stop leaves running jobs TRAINING: the next start
 * resumes them through their executor, or fails them with why.
 */
export class TrainingRunner {
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private stopping = false;

  constructor(private readonly o: RunnerOptions) {}

  /** Applies the resume policy to the jobs a restart cut off, then starts the queued ones. */
  start(): void {
    for (const job of this.o.jobs.interrupted().filter((j) => j.kind === 'train')) {
      const executor = this.executorOf(job);
      const cannot = executor.cannotResume(job);
      if (cannot) {
        this.o.jobs.transition(job.id, 'FAILED', {
          reason: cannot,
          result: { ...(job.result ?? {}), error: { code: 'training.interrupted', message: cannot } },
        });
      } else {
        this.drive(job, (r) => executor.resume(r));
      }
    }
    this.pump();
  }

  pump(): void {
    if (this.stopping) return;
    for (const job of this.o.jobs.list({ kind: 'train', state: 'QUEUED', limit: 1000 }).reverse()) {
      if (this.running.size >= this.o.maxRunning) return;
      const executor = this.executorOf(job);
      this.drive(this.o.jobs.transition(job.id, 'TRAINING'), (r) => executor.run(r));
    }
  }

  /** Cancels a queued or running train job; resolves when it is FAILED. */
  async cancel(id: string, by: string): Promise<void> {
    const job = this.o.jobs.get(id);
    if (!job) throw new LookoutError('builder-store.job_unknown', `no job ${id}`, { details: { job_id: id } });
    if (job.kind !== 'train' || !['QUEUED', 'TRAINING'].includes(job.state)) {
      throw new LookoutError('training.not_cancellable', `job ${id} is a ${job.kind} job in ${job.state}; only queued or running training jobs cancel`, {
        details: { job_id: id, state: job.state },
      });
    }
    const r = this.running.get(id);
    if (!r) {
      const reason = `cancelled by ${by} before it started`;
      this.o.jobs.transition(id, 'FAILED', { reason, result: { error: { code: 'training.cancelled', message: reason } } });
      return;
    }
    r.abort.abort(new LookoutError('training.cancelled', `cancelled by ${by}`));
    await r.done;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const r of this.running.values()) r.abort.abort(STOPPING);
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private executorOf(job: Job): TrainExecutor {
    return this.o.executors[job.executor ?? 'local'];
  }

  private jobDir(id: string): string {
    return join(this.o.dataDir, 'train', id);
  }

  private runOf(job: Job, abort: AbortController): TrainRun {
    const p = job.params as TrainParams;
    const { jobs } = this.o;
    return {
      job,
      recipe: this.o.recipes[p.recipe],
      params: {
        job_id: job.id,
        epochs: p.epochs,
        batch_size: p.batch_size,
        input_size: p.input_size,
        dataset: localPath(p.gcs_dataset),
        classes: p.classes,
        options: p.options,
      },
      datasetUri: p.gcs_dataset,
      gpuType: p.gpu_type,
      outDir: this.jobDir(job.id),
      signal: abort.signal,
      log: (stream, line) => jobs.log(job.id, stream, line),
      progress: (progress, note) => jobs.progress(job.id, progress, note),
      remember: (state) => jobs.remember(job.id, state),
    };
  }

  private drive(job: Job, work: (run: TrainRun) => Promise<TrainOutcome>): void {
    const abort = new AbortController();
    const p = job.params as TrainParams;
    const limitS = Math.min(p.time_limit_s ?? Infinity, this.o.timeLimitS);
    const timer = setTimeout(
      () => abort.abort(new LookoutError('training.time_limit', `the job ran past its time limit of ${limitS} s and was stopped`)),
      limitS * 1000,
    );
    const done = (async () => {
      try {
        await mkdir(this.jobDir(job.id), { recursive: true });
        const result = await this.checked(job, await work(this.runOf(job, abort)));
        this.o.jobs.transition(job.id, 'TRAINING_COMPLETE', { result: { ...(this.o.jobs.get(job.id)!.result ?? {}), ...result } });
      } catch (err) {
        if (this.stopping && abort.signal.reason === STOPPING) {
          this.o.jobs.log(job.id, 'event', 'the builder stopped during the job; the next start resumes it or fails it with why');
          return;
        }
        const e = toLookoutError(abort.signal.aborted && abort.signal.reason instanceof LookoutError ? abort.signal.reason : err);
        if (e.code === 'internal') this.o.onInternalError(err, job.id);
        this.o.jobs.transition(job.id, 'FAILED', { reason: e.message, result: { error: { code: e.code, message: e.message } } });
      } finally {
        clearTimeout(timer);
        this.running.delete(job.id);
        this.pump();
      }
    })();
    this.running.set(job.id, { abort, done });
  }

  /** The result of a run, its local export's input read from the graph: [1, 3, side, side] as declared, or the job fails. */
  private async checked(job: Job, out: TrainOutcome): Promise<TrainResult> {
    const p = job.params as TrainParams;
    const result: TrainResult = { ...out, recipe: p.recipe, ontology: p.ontology, ...(p.ontology_hash ? { ontology_hash: p.ontology_hash } : {}) };
    if (!out.onnx_path) return result;
    const onnxPath = resolve(this.jobDir(job.id), out.onnx_path);
    const { shape } = await onnxInputShape(onnxPath);
    const want = [1, 3, p.input_size, p.input_size];
    if (shapeText(shape) !== shapeText(want)) {
      throw new LookoutError('training.export_shape_mismatch', `the export's input is ${shapeText(shape)}; the job declared ${shapeText(want)}`);
    }
    return { ...result, onnx_path: onnxPath, input_shape: shape };
  }
}

function localPath(uri: string): string {
  return uri.startsWith('file://') ? fileURLToPath(uri) : uri;
}
