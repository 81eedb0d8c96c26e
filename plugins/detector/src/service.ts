import { serviceToken } from '../../../core/src/plugin/service-token.js';
import type { Detection } from '../../../core/src/contracts/detection.js';
import type { Frame } from '../../camera/src/service.js';

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
}

export const DetectionPipelineToken = serviceToken<DetectionPipeline>('detection-pipeline');
