import { z } from 'zod';
import { definePlugin } from 'lookout/core';
import { nativeStatus } from 'lookout/native';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { ByteTracker } from './tracking/byte-tracker.js';
import { TrackerStage } from './tracker-stage.js';

export const TrackerConfigSchema = z.object({
  /** Spec 02's tracker enable flag (layer 3 keys list it with 1). */
  TRACKER_ENABLE: z.coerce.number().int().min(0).max(1).default(1),
  /** Hits a new track needs before it publishes a track_id. */
  TRACKER_MIN_HITS: z.coerce.number().int().min(1).max(30).default(2),
  /** Tracker frames a lost track is kept for re-finding after an occlusion (30 = 3 s at 10 Hz). */
  TRACKER_LOST_BUFFER_FRAMES: z.coerce.number().int().min(0).max(600).default(30),
  /** What one tracker frame stands for: RF_DETR_STRIDE_FPS's default 10 Hz. */
  TRACKER_FRAME_MS: z.coerce.number().positive().max(10_000).default(100),
});
export type TrackerConfig = z.output<typeof TrackerConfigSchema>;

/**
 * Layer 2: a ByteTrack-style multi-object tracker as a stage of the detector's pipeline, so `dets`
 * carries a stable integer track_id per confirmed object.
 */
export default definePlugin({
  name: 'tracker',
  version: '1.0.0',
  core: '^1',
  description: 'multi-object tracker adding stable track_id to detections (ByteTrack-style)',
  layer: 'layer2',
  requires: [DetectionPipelineToken],
  config: TrackerConfigSchema,
  start(ctx) {
    if (ctx.config.TRACKER_ENABLE !== 1) {
      ctx.log.info('tracker disabled by TRACKER_ENABLE=0');
      ctx.health.set('ok', 'disabled (TRACKER_ENABLE=0)');
      return;
    }
    const pipeline = ctx.services.get(DetectionPipelineToken);
    const tracker = new ByteTracker({ minHits: ctx.config.TRACKER_MIN_HITS, lostBufferFrames: ctx.config.TRACKER_LOST_BUFFER_FRAMES });
    let failures = 0;
    const stage = new TrackerStage({
      tracker,
      frameMs: ctx.config.TRACKER_FRAME_MS,
      onError: (err) => {
        // Once, then every 100th: a detector emitting bad boxes would otherwise flood the log at 10 Hz.
        if (failures++ % 100 === 0) ctx.log.warn({ code: err.code, failures }, `detections passed on untracked: ${err.message}`);
        ctx.health.set('degraded', err.message);
      },
    });
    const remove = pipeline.addStage(stage);
    ctx.health.set('ok');
    // The IoU matrix runs on the native addon when it loaded, else on its TypeScript twin (same numbers).
    const kernels = nativeStatus();
    if (kernels.implementation === 'typescript' && !kernels.disabled) ctx.log.warn({ reason: kernels.reason }, `native kernels not loaded: ${kernels.reason}`);
    ctx.log.info(
      { minHits: ctx.config.TRACKER_MIN_HITS, lostBufferFrames: ctx.config.TRACKER_LOST_BUFFER_FRAMES, kernels: kernels.implementation },
      'tracker stage added',
    );
    return { stop: () => remove() };
  },
});

export { ByteTracker, withTrackId, padToMinSize, type MultiObjectTracker, type TrackSnapshot, type UpdateOptions } from './tracking/byte-tracker.js';
export { GreedyIouTracker, type GreedyIouOptions } from './tracking/greedy-iou-tracker.js';
export { ByteTrackerOptionsSchema, parseByteTrackerOptions, type ByteTrackerOptions, type ByteTrackerOptionsInput } from './tracking/tracker-options.js';
export { TrackerStage, TRACKER_STAGE_ORDER, type TrackerStageOptions } from './tracker-stage.js';
export { solveLinearAssignment, solveGatedAssignment, type CostMatrix, type Assignment, type GatedMatching } from './assignment/linear-assignment.js';
export { iou, iouMatrix, boxOfDetection, type Box } from './geometry/box.js';
export { BoxKalmanFilter, DEFAULT_KALMAN_NOISE, type KalmanNoise } from './kalman/box-kalman-filter.js';
export {
  evaluateMot,
  hypothesesFromDetections,
  type EvalFrame,
  type EvalTruth,
  type EvalHypothesis,
  type MotMetrics,
  type MotOptions,
} from './evaluation/mot-metrics.js';
