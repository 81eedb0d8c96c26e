import { z } from 'zod';
import { definePlugin } from 'lookout/core';
import { FrameSourceToken, SimScenarioToken } from '../../camera/src/service.js';
import { DetectionPipelineToken, InferenceKitToken } from '../../detector/src/service.js';
import { DEPTH_BACKEND_NAMES } from './backends/depth-backend-records.js';
import { openDepthBackend } from './backends/open-depth-backend.js';
import { DepthStage } from './depth-stage.js';

export const DepthConfigSchema = z.object({
  /** Spec 02 layer 3 key: a path under /data/models. */
  MONO_DEPTH_MODEL_PATH: z.string().min(1).optional(),
  /** Spec 02 layer 3 key: depth estimates per second; detector frames in between reuse the latest. */
  MONO_DEPTH_FPS: z.coerce.number().positive().max(60).default(8),
  MONO_DEPTH_BACKEND: z.enum(DEPTH_BACKEND_NAMES).optional(),
  /** metric: the model gives metres; inverse: it gives inverse depth, read as MONO_DEPTH_SCALE / value. */
  MONO_DEPTH_OUTPUT: z.enum(['metric', 'inverse']).default('metric'),
  MONO_DEPTH_SCALE: z.coerce.number().positive().default(1),
});
export type DepthConfig = z.output<typeof DepthConfigSchema>;

/**
 * Layer 3: monocular depth and spatial fusion. A stage of the detector pipeline adds x, y, z (metres,
 * camera frame) to each detection from the median depth in the box's lower-central region.
 */
export default definePlugin({
  name: 'depth',
  version: '1.0.0',
  core: '^1',
  description: 'monocular depth (onnx model or sim ground truth) and spatial fusion adding x, y, z to detections',
  layer: 'layer3',
  requires: [DetectionPipelineToken, FrameSourceToken, InferenceKitToken],
  optionalRequires: [SimScenarioToken],
  config: DepthConfigSchema,
  async start(ctx) {
    const c = ctx.config;
    const pipeline = ctx.services.get(DetectionPipelineToken);
    const source = ctx.services.get(FrameSourceToken);
    const sim = ctx.services.optional(SimScenarioToken);
    const opening = openDepthBackend({
      ...(c.MONO_DEPTH_BACKEND ? { backend: c.MONO_DEPTH_BACKEND } : {}),
      ...(c.MONO_DEPTH_MODEL_PATH ? { modelPath: c.MONO_DEPTH_MODEL_PATH } : {}),
      dataDir: ctx.runtime.dataDir,
      simSource: sim !== undefined,
      kit: ctx.services.get(InferenceKitToken),
      output: c.MONO_DEPTH_OUTPUT,
      scale: c.MONO_DEPTH_SCALE,
    });
    // Released at stop, also when start fails after the model has loaded.
    ctx.onStop(() =>
      opening.then(
        ({ backend }) => backend.close(),
        () => undefined,
      ),
    );
    const loaded = opening.then(({ backend }) => backend);
    loaded.catch(() => undefined); // a failure to load is start's to report; a waiting frame only gives up
    let failures = 0;
    const stage = new DepthStage({
      // In the pipeline before the model has loaded (a large file on flash takes a while): the
      // detector, which started first, is already running frames, and none may leave without x, y, z.
      backend: loaded,
      intrinsics: source.intrinsics,
      intrinsicsSize: { width: source.width, height: source.height },
      fps: c.MONO_DEPTH_FPS,
      onError: (err) => {
        // Once, then every 100th: a failing model would otherwise log at the frame rate.
        if (failures++ % 100 === 0) ctx.log.warn({ code: err.code, failures }, `depth not fused: ${err.message}`);
        ctx.health.set('degraded', err.message);
      },
    });
    ctx.onStop(pipeline.addStage(stage));
    const { backend, note } = await opening;
    if (note) ctx.log.info(note);
    ctx.health.set('ok', `${backend.name} depth at ${c.MONO_DEPTH_FPS} fps`);
    ctx.log.info({ backend: backend.name, source: backend.source, fps: c.MONO_DEPTH_FPS }, 'depth stage added');
  },
});

export { DepthStage, DEPTH_STAGE_ORDER, type DepthStageOptions } from './depth-stage.js';
export { openDepthBackend, type OpenDepthOptions } from './backends/open-depth-backend.js';
export { OnnxDepthBackend, type OnnxDepthOptions, type DepthOutputKind } from './backends/onnx-depth-backend.js';
export { SimDepthBackend } from './backends/sim-depth-backend.js';
export type { DepthBackend, DepthBackendName } from './backends/depth-backend.js';
export {
  LOWER_CENTRAL_REGION,
  backProject,
  checkIntrinsics,
  fuseDetection,
  medianDepthInBox,
  scaleIntrinsics,
  type DepthMap,
  type Point3,
  type SampleRegion,
} from './fusion.js';
export { renderTruthDepthMap } from './truth-depth.js';
