/**
 * How a training recipe (a child process) talks to the local executor. It is started as
 * `<command> --params <out>/params.json --out <out>`, reads its parameters from that file, writes
 * its logs to stdout/stderr, and two kinds of lines the executor parses:
 *
 *   LOOKOUT_PROGRESS {"epoch": 3, "epochs": 25, "metrics": {"loss": 0.81}}
 *   LOOKOUT_EXPORT {"onnx": "<out>/inference_model.onnx"}
 *
 * It exits 0 after the export, non-zero with its reason as the last stderr line otherwise.
 */

export const PROGRESS_PREFIX = 'LOOKOUT_PROGRESS ';
export const EXPORT_PREFIX = 'LOOKOUT_EXPORT ';

export interface RecipeParams {
  job_id: string;
  epochs: number;
  batch_size: number;
  /** The export's fixed input side: the ONNX input is [1, 3, input_size, input_size]. */
  input_size: number;
  /** The dataset as the recipe reads it: a local folder for the local executor. */
  dataset: string;
  /** The ontology's classes, in id order: the head's size. */
  classes: string[];
  /** Recipe-specific knobs, passed through. */
  options: Record<string, string | number | boolean>;
}

export interface RecipeProgress {
  epoch: number;
  epochs: number;
  metrics?: Record<string, number>;
}
