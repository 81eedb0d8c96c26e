import type { Job, JobLogLine } from 'lookout/builder-plugins/store';
import type { RecipeParams } from '../recipes/recipe-protocol.js';

/** A training recipe: what the local executor starts, and its export side when the launch names none. */
export interface Recipe {
  name: string;
  /** argv before `--params … --out …`. */
  command: string[];
  defaultInputSize: number;
  /** Why it cannot run here (its environment missing), or undefined when it can. */
  unavailable?: () => string | undefined;
}

/** One training job handed to an executor. */
export interface TrainRun {
  job: Job;
  recipe: Recipe;
  params: RecipeParams;
  /** The dataset URI as launched (gcs_dataset). */
  datasetUri: string;
  gpuType: string;
  /** The job's own folder on the builder. */
  outDir: string;
  /** Aborted on cancel, on the time limit and when the builder stops. */
  signal: AbortSignal;
  log(stream: JobLogLine['stream'], line: string): void;
  progress(progress: number, note: string, metrics?: Record<string, number>): void;
  /** Keeps what a restart needs to resume the job (a remote job's name) in the job's result. */
  remember(state: Record<string, unknown>): void;
}

export interface TrainOutcome {
  /** The export on the builder's disk (local), or where the remote job left it. */
  onnx_path?: string;
  export_uri?: string;
  metrics: Record<string, number>;
}

/**
 * Executors behind one interface: `local` runs the recipe as a child process, `vertex` submits a
 * Vertex AI custom job. A failure throws a LookoutError whose message is the job's reason.
 */
export interface TrainExecutor {
  readonly name: string;
  run(run: TrainRun): Promise<TrainOutcome>;
  /**
   * Why a job a restart cut off cannot be picked up again (a local child process ended with the
   * builder), or undefined when it can (a remote job goes on without the builder).
   */
  cannotResume(job: Job): string | undefined;
  /** Picks up a job a restart cut off (cannotResume said it can). */
  resume(run: TrainRun): Promise<TrainOutcome>;
}
