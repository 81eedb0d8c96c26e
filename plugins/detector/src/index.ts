import { z } from 'zod';
import { DETECTION_STATES, LatestDetsResultSchema, type Detection, busTopic } from 'lookout/core/contracts';
import { LookoutError, definePlugin, toLookoutError } from 'lookout/core';
import { nativeStatus } from 'lookout/native';
import { FrameSourceToken } from '../../camera/src/service.js';
import { DieTemperatureToken, TelemetryChannelToken } from '../../die-temp/src/service.js';
import { BACKEND_NAMES } from './backends/backend-records.js';
import { openBackend } from './backends/open-backend.js';
import { DetectorConfigSchema } from './config.js';
import { DetectionLoop } from './detection-loop.js';
import { passesPersonGate } from './model/class-maps.js';
import { Pipeline } from './pipeline.js';
import { inferenceKit } from './inference-kit.js';
import { DetectionPipelineToken, InferenceKitToken } from './service.js';

export const RfdetrStatusSchema = z.looseObject({
  backend: z.enum(BACKEND_NAMES).nullable(),
  model_path: z.string().nullable(),
  package_version: z.string().nullable(),
  ontology_hash: z.string().nullable(),
  train_job_id: z.string().nullable(),
  class_map: z.string(),
  /** In the ids dets carry (after the package's remap), with the production name and the model's own labels. */
  classes: z.array(z.object({ id: z.number().int().min(0), name: z.string().nullable(), model_labels: z.array(z.string()) })),
  input_shape: z.array(z.number().int()),
  stride_fps: z.number(),
  achieved_fps: z.number(),
  frames_processed: z.number().int(),
  /** Measured like telemetry's camera_fps and skipped_fps; null until two frames were read. */
  camera_fps: z.number().nullable(),
  skipped_fps: z.number().nullable(),
  /** Named as telemetry and get_latest_dets name it: running, suspended by the thermal governor, or off (the model failed). */
  detection: z.enum(DETECTION_STATES),
  /** Why detection is not running; null while running. */
  detection_reason: z.string().nullable(),
  /** When the thermal governor suspended neural work; null otherwise. */
  suspended_since: z.string().nullable(),
  stages: z.array(z.string()),
  /** Why the last frame failed ({code, message}); null once a frame succeeds. */
  last_error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** Set when the model failed its checks at start: the detector runs as a failed plugin and says why. */
  model_error: z.object({ code: z.string(), message: z.string() }).nullable(),
  /** Which frame kernels (preprocessing, decoding) run: the native addon, or the TypeScript twins and why. */
  kernels: z.object({ implementation: z.enum(['native', 'typescript']), reason: z.string().nullable() }),
});

export default definePlugin({
  name: 'detector',
  version: '1.0.0',
  core: '^1',
  description: 'RF-DETR detector (snpe on the DSP, onnx on CPU, or sim from ground truth); owner of dets, source of telemetry from layer 1',
  layer: 'layer1',
  // Telemetry is die-temp's topic (layer 0 publishes it too); the detector feeds it one message per frame.
  requires: [FrameSourceToken, DieTemperatureToken, TelemetryChannelToken],
  config: DetectorConfigSchema,
  topics: [busTopic('dets')],
  tools: [
    {
      name: 'get_latest_dets',
      readOnly: true,
      idempotent: true,
      description: 'The latest detections with person count, track ids and die temperature',
      input: z.object({}),
      output: LatestDetsResultSchema,
    },
    {
      name: 'get_rfdetr_status',
      readOnly: true,
      idempotent: true,
      description: 'Detector back-end, model package, class list, input shape, achieved rate and last error',
      input: z.object({}),
      output: RfdetrStatusSchema,
    },
  ],
  provides: [DetectionPipelineToken, InferenceKitToken],
  async start(ctx) {
    const kernels = nativeStatus();
    // A missing or broken addon costs speed, never the detector: the TypeScript twins run instead.
    if (kernels.implementation === 'typescript' && !kernels.disabled) ctx.log.warn({ reason: kernels.reason }, `native kernels not loaded: ${kernels.reason}`);
    const kernelsStatus = { implementation: kernels.implementation, reason: kernels.reason };
    const source = ctx.services.get(FrameSourceToken);
    const temperature = ctx.services.get(DieTemperatureToken);
    ctx.services.provide(InferenceKitToken, inferenceKit);
    let opened: Awaited<ReturnType<typeof openBackend>>;
    try {
      opened = await openBackend(ctx.config, ctx.runtime.dataDir);
    } catch (err) {
      // A model that fails its checks leaves the device up: the detector reports failed with the
      // model's code, and its status tool says why (the hub shows it in /fleet/health).
      const failure = toLookoutError(err);
      ctx.health.fail(failure);
      ctx.log.error({ code: failure.code }, `detector not running: ${failure.message}`);
      const modelError = { code: failure.code, message: failure.message };
      ctx.tools.register('get_latest_dets', () => {
        throw new LookoutError('plugin_failed', `the detector is not running: ${failure.message}`, { details: { model_error: modelError } });
      });
      ctx.tools.register('get_rfdetr_status', () => ({
        backend: ctx.config.RF_DETR_BACKEND ?? null,
        model_path: ctx.config.RF_DETR_MODEL_PATH ?? ctx.config.RF_DETR_EDGE4_MODEL ?? null,
        package_version: null,
        ontology_hash: null,
        train_job_id: null,
        class_map: 'none',
        classes: [],
        input_shape: [],
        stride_fps: ctx.config.RF_DETR_STRIDE_FPS,
        achieved_fps: 0,
        frames_processed: 0,
        camera_fps: null,
        skipped_fps: null,
        detection: 'off',
        detection_reason: `the model failed its checks: ${failure.message}`,
        suspended_since: null,
        stages: [],
        last_error: modelError,
        model_error: modelError,
        kernels: kernelsStatus,
      }));
      return;
    }
    const { backend, modelPath } = opened;
    ctx.onStop(() => backend.close());
    const telemetry = ctx.services.get(TelemetryChannelToken);
    ctx.onStop(telemetry.attach());
    const pipeline = new Pipeline(backend, () => ctx.clock.now());
    ctx.services.provide(DetectionPipelineToken, pipeline);
    const loop = new DetectionLoop({
      source,
      pipeline,
      temperature,
      telemetry,
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
        track_id: mostConfidentPersonTrack(dets),
        track_ids: dets.flatMap((d) => (d.track_id === undefined ? [] : [d.track_id])),
        temp_c: latest?.temp_c ?? temperature.current(),
        timestamp: latest?.timestamp ?? null,
        // While suspended these are the last frame detected (dated by timestamp), not the scene now.
        detection: loop.state.suspension ? 'suspended' : 'running',
        suspended_since: loop.state.suspension?.since ?? null,
      };
    });
    ctx.tools.register('get_rfdetr_status', () => {
      const s = backend.status();
      // The throttle says whether neural work is suspended now; the loop's record (since, why) lags it by a frame.
      const suspended = pipeline.throttle.suspended;
      const suspension = suspended ? loop.state.suspension : null;
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
        achieved_fps: round1(loop.state.achievedFps),
        frames_processed: loop.state.framesProcessed,
        camera_fps: round1(loop.state.cameraFps),
        skipped_fps: round1(loop.state.skippedFps),
        detection: suspended ? 'suspended' : 'running',
        detection_reason: suspension?.reason ?? null,
        suspended_since: suspension?.since ?? null,
        stages: pipeline.stageNames(),
        last_error: loop.state.lastError,
        model_error: null,
        kernels: kernelsStatus,
      };
    });

    // The first frame waits for the plugins that add stages or a throttle (they start after this one).
    ctx.onStarted(() => loop.start());
    ctx.log.info({ backend: backend.name, modelPath, strideFps: ctx.config.RF_DETR_STRIDE_FPS, kernels: kernels.implementation }, 'detector started');
    return { stop: () => loop.stop() };
  },
});

/** The track id of the most confident gated person detection; null without one (or without the tracker layer). */
function mostConfidentPersonTrack(dets: readonly Detection[]): number | null {
  let best: Detection | undefined;
  for (const d of dets) if (d.track_id !== undefined && passesPersonGate(d) && (!best || d.p > best.p)) best = d;
  return best?.track_id ?? null;
}

function round1<T extends number | null>(n: T): T {
  return (n === null ? null : Math.round(n * 10) / 10) as T;
}

export { DetectionPipelineToken } from './service.js';
export type { DetectionPipeline, DetectionStage, DetectionThrottle } from './service.js';
