import { serviceToken } from 'lookout/core';

/**
 * Builder stage 3, training: `POST /api/pipeline/launch` queues a `train` job that an executor
 * (`local`, `vertex`) runs. A TRAINING_COMPLETE job's result names its export:
 * `{ onnx_path?, export_uri?, input_shape: [1, 3, H, W], recipe, metrics, ontology, ontology_hash }`.
 */
export { onnxInputShape, shapeText } from './onnx-input-shape.js';

export interface TrainResult {
  onnx_path?: string;
  export_uri?: string;
  input_shape?: (number | string)[];
  recipe: string;
  ontology: string;
  ontology_hash?: string;
  metrics: Record<string, number>;
}

export interface TrainingService {
  /** Cancels a queued or running training job (it becomes FAILED, reason "cancelled …"). */
  cancel(jobId: string, by?: string): Promise<void>;
}

export const TRAINING = serviceToken<TrainingService>('builder.training');
