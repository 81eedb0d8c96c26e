import type { InferenceSession } from 'onnxruntime-node';
import { serviceToken } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { Frame } from '../../camera/src/service.js';
import type { PublishedClass } from './model/published-classes.js';

export type { PublishedClass } from './model/published-classes.js';

/** A step later layers add after detection (tracker: track_id; depth: x, y, z). Lower order runs first. */
export interface DetectionStage {
  name: string;
  order: number;
  process(dets: Detection[], frame: Frame): Promise<Detection[]> | Detection[];
}

export interface DetectionThrottle {
  /** Lowered stride at THERMAL_WARN; undefined restores RF_DETR_STRIDE_FPS. */
  strideFps?: number;
  /** True at THERMAL_CRITICAL: no neural work, no dets; telemetry goes on without detections. */
  suspended: boolean;
}

export interface DetectionPipeline {
  addStage(stage: DetectionStage): () => void;
  setThrottle(throttle: DetectionThrottle): void;
  /** Called after every processed frame with the final detections. */
  onResult(listener: (dets: Detection[], frame: Frame) => void): () => void;
  /** The classes the loaded model publishes, in the ids dets carry (after the package's remap), with the model's own labels. */
  classes(): readonly PublishedClass[];
}

export const DetectionPipelineToken = serviceToken<DetectionPipeline>('detection-pipeline');

/** Packed BGR888 frame → NCHW float32 RGB, resized (antialiased bilinear) and ImageNet-normalized. */
export interface FramePreprocessor {
  readonly sizes: { srcWidth: number; srcHeight: number; dstWidth: number; dstHeight: number };
  /** The returned tensor is reused by the next call. */
  run(bgr: Uint8Array): Float32Array;
}

/** The detector's CPU inference parts, for other vision plugins (depth) that run ONNX models on frames. */
export interface InferenceKit {
  /** An onnxruntime-node session on the CPU with every graph optimization. */
  createCpuSession(model: Uint8Array, threads?: number): Promise<InferenceSession>;
  createPreprocessor(sizes: { srcWidth: number; srcHeight: number; dstWidth: number; dstHeight: number }): FramePreprocessor;
}

export const InferenceKitToken = serviceToken<InferenceKit>('detector.inference-kit');

// The class taxonomies of spec 02 and the labels.json contract, for the builder's ontology stage (one source of truth).
export {
  OMNI15_CLASSES,
  OMNI15_PERSON_ID,
  OMNI15_TO_PRODUCTION_EXAMPLE,
  PRODUCTION_LABELS,
  PERSON_CLASS_ID,
  countGatedPersons,
  WEAPONS_ONTOLOGY_DEFAULT,
  type ClassMapName,
} from './model/class-maps.js';
export { PackageLabelsSchema, type PackageLabels } from './model/package-schema.js';
