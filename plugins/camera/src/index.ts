import { z } from 'zod';
import { definePlugin } from 'lookout/core';
import { FrameSourceToken, SimScenarioToken } from './service.js';
import { SimFrameSource } from './sim-frame-source.js';
import { loadScenario } from './scenario-files.js';

/** Frame sources this build can open; a real camera source joins this list when it exists. */
export const FRAME_SOURCES = ['sim'] as const;

export const CameraConfigSchema = z.object({
  LOOKOUT_SOURCE: z
    .enum(FRAME_SOURCES, {
      error: (issue) => `unknown frame source ${JSON.stringify(issue.input)}; the sources are: ${FRAME_SOURCES.join(', ')}`,
    })
    .default('sim'),
  SIM_SCENARIO: z.string().min(1).default('people-crossing').describe('a scenario name from configs/scenarios or a path'),
  EDGE_V3_ENCODE_ONLY: z.enum(['0', '1']).optional().describe('1 reserves the camera for the encoder; 0 shares it with neural work (layer 1 and up, spec 02)'),
});
export type CameraConfig = z.output<typeof CameraConfigSchema>;

export default definePlugin({
  name: 'camera',
  version: '1.0.0',
  core: '^1',
  description: 'Frame source: a simulated camera rendering scenario files (configs/scenarios) with ground truth',
  layer: 'layer0',
  config: CameraConfigSchema,
  provides: [FrameSourceToken, SimScenarioToken],
  start(ctx) {
    const loaded = loadScenario(ctx.config.SIM_SCENARIO);
    const source = new SimFrameSource(loaded.scenario, { now: () => ctx.clock.now() });
    ctx.services.provide(FrameSourceToken, source);
    ctx.services.provide(SimScenarioToken, {
      name: loaded.name,
      path: loaded.path,
      scenario: loaded.scenario,
      temperatureAt: (atMs?: number) => source.temperatureAt(atMs),
    });
    ctx.log.info({ source: 'sim', scenario: loaded.name, path: loaded.path, fps: source.nominalFps }, 'frame source ready');
    ctx.health.set('ok', `sim scenario ${loaded.name}`);
    return { stop: () => source.close() };
  },
});

export { FrameSourceToken } from './service.js';
export type { Frame, FrameSource, GroundTruthObject, CameraIntrinsics } from './service.js';
export { SimFrameSource, type SimFrameSourceOptions } from './sim-frame-source.js';
export { SceneRenderer, SIM_WIDTH, SIM_HEIGHT, SIM_INTRINSICS, type RenderedScene } from './render-scene.js';
export { ScenarioSchema, parseScenario, type Scenario, type SceneObject, type TemperaturePoint } from './scenario-schema.js';
export { loadScenario, loadScenarioFile, listScenarios, resolveScenarioPath, scenariosDir, type LoadedScenario } from './scenario-files.js';
export { NO_PRODUCTION_CLASS, PRODUCTION_LABELS, SCENE_LABELS, classIdOf, type SceneLabel } from './scenario-classes.js';
export { temperatureAt } from './temperature-script.js';
export { SimScenarioToken, type SimScenarioInfo } from './service.js';
