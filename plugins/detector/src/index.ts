import { z } from 'zod';
import { definePlugin } from '../../../core/src/plugin/context.js';
import { busTopic } from '../../../core/src/contracts/bus-contracts.js';
import { LatestDetsResultSchema } from '../../../core/src/contracts/latest-dets-result.js';
import { FrameSourceToken } from '../../camera/src/service.js';
import { DieTemperatureToken } from '../../die-temp/src/service.js';
import { openBackend } from './backends/open-backend.js';
import { DetectorConfigSchema } from './config.js';
import { DetectionLoop } from './detection-loop.js';
import { Pipeline } from './pipeline.js';
import { DetectionPipelineToken } from './service.js';

export const RfdetrStatusSchema = z.looseObject({
  backend: z.enum(['snpe', 'onnx', 'sim']),
  model_path: z.string().nullable(),
  package_version: z.string().nullable(),
  ontology_hash: z.string().nullable(),
  train_job_id: z.string().nullable(),
  class_map: z.string(),
  classes: z.array(z.string().nullable()),
  input_shape: z.array(z.number().int()),
  stride_fps: z.number(),
  achieved_fps: z.number(),
  frames_processed: z.number().int(),
  suspended: z.boolean(),
  stages: z.array(z.string()),
  last_error: z.string().nullable(),
});

export default definePlugin({
  name: 'detector',
  version: '1.0.0',
  core: '^1',
  description: 'RF-DETR detector (snpe on the DSP, onnx on CPU, or sim from ground truth); owner of dets and telemetry',
  layer: 'layer1',
  dependsOn: ['camera', 'die-temp'],
  config: DetectorConfigSchema,
  topics: [busTopic('dets'), busTopic('telemetry')],
  tools: [
    { name: 'get_latest_dets', description: 'The latest detections with person count, track ids and die temperature', input: z.object({}), output: LatestDetsResultSchema },
    { name: 'get_rfdetr_status', description: 'Detector back-end, model package, class list, input shape, achieved rate and last error', input: z.object({}), output: RfdetrStatusSchema },
  ],
  provides: [DetectionPipelineToken],
  async start(ctx) {
    const source = ctx.services.get(FrameSourceToken);
    const temperature = ctx.services.get(DieTemperatureToken);
    const { backend, modelPath } = await openBackend(ctx.config, ctx.runtime.dataDir);
    ctx.onStop(() => backend.close());
    const pipeline = new Pipeline(backend);
    ctx.services.provide(DetectionPipelineToken, pipeline);
    const loop = new DetectionLoop({
      source,
      pipeline,
      temperature,
      bus: ctx.bus,
      clock: ctx.clock,
      log: ctx.log,
      cameraId: ctx.runtime.role ?? 'camera',
      strideFps: ctx.config.RF_DETR_STRIDE_FPS,
      onError: (message) => ctx.health.set(message ? 'degraded' : 'ok', message ?? undefined),
    });

    ctx.tools.register('get_latest_dets', () => {
      const latest = loop.state.latest;
      const dets = latest?.dets ?? [];
      return {
        dets,
        person_count: latest?.person_count ?? 0,
        track_id: dets.flatMap((d) => (d.track_id === undefined ? [] : [d.track_id])),
        temp_c: latest?.temp_c ?? temperature.current(),
        timestamp: latest?.timestamp ?? null,
      };
    });
    ctx.tools.register('get_rfdetr_status', () => {
      const s = backend.status();
      return {
        backend: s.backend,
        model_path: modelPath ?? s.modelPath,
        package_version: s.packageVersion,
        ontology_hash: s.ontologyHash,
        train_job_id: s.trainJobId,
        class_map: s.classMap,
        classes: s.classes,
        input_shape: s.inputShape,
        stride_fps: loop.strideFps(),
        achieved_fps: Math.round(loop.state.achievedFps * 10) / 10,
        frames_processed: loop.state.framesProcessed,
        suspended: pipeline.throttle.suspended,
        stages: pipeline.stageNames(),
        last_error: loop.state.lastError,
      };
    });

    // The first frame waits for the plugins that add stages or a throttle (they start after this one).
    ctx.onStarted(() => loop.start());
    ctx.log.info({ backend: backend.name, modelPath, strideFps: ctx.config.RF_DETR_STRIDE_FPS }, 'detector started');
    return { stop: () => loop.stop() };
  },
});

export { DetectionPipelineToken } from './service.js';
export type { DetectionPipeline, DetectionStage, DetectionThrottle } from './service.js';
