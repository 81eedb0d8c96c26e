import { z } from 'zod';
import { definePlugin, toLookoutError } from 'lookout/core';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { DieTemperatureToken } from '../../die-temp/src/service.js';
import { checkThermalThresholds } from './governor-state-machine.js';
import { Governor } from './governor.js';
import { ThermalGovernorToken, type ThermalGovernor } from './service.js';

export const ThermalConfigSchema = z
  .object({
    /** The layer 4 env files set it; 0 keeps the plugin loaded but never throttles (always NORMAL). */
    THERMAL_GOVERNOR_ENABLE: z.coerce.number().int().min(0).max(1).default(1),
    THERMAL_WARN_C: z.coerce.number().min(0).max(150).default(75),
    THERMAL_CRITICAL_C: z.coerce.number().min(0).max(150).default(85),
    /** Degrees below a threshold the die must cool to before the state steps back down. */
    THERMAL_HYSTERESIS_C: z.coerce.number().min(0).max(50).default(5),
    /** Detector stride while THERMAL_WARN (RF_DETR_STRIDE_FPS applies again at NORMAL). */
    THERMAL_WARN_STRIDE_FPS: z.coerce.number().positive().max(60).default(5),
  })
  .refine((c) => c.THERMAL_WARN_C < c.THERMAL_CRITICAL_C, {
    message: 'THERMAL_WARN_C must be below THERMAL_CRITICAL_C',
    path: ['THERMAL_WARN_C'],
  });

const ALWAYS_NORMAL: ThermalGovernor = { state: () => 'NORMAL', onChange: () => () => undefined };

/**
 * Layer 4: the thermal governor. Every die temperature reading goes through the state machine; on a
 * change the detector is throttled (lower stride at THERMAL_WARN, suspended at THERMAL_CRITICAL) and
 * listeners hear of it (the status plugin republishes its retained status).
 */
export default definePlugin({
  name: 'thermal',
  version: '1.0.0',
  core: '^1',
  description: 'thermal governor: NORMAL / THERMAL_WARN / THERMAL_CRITICAL with hysteresis, throttling the detector',
  layer: 'layer4',
  requires: [DieTemperatureToken, DetectionPipelineToken],
  config: ThermalConfigSchema,
  provides: [ThermalGovernorToken],
  start(ctx) {
    const c = ctx.config;
    if (c.THERMAL_GOVERNOR_ENABLE !== 1) {
      ctx.services.provide(ThermalGovernorToken, ALWAYS_NORMAL);
      ctx.log.info('thermal governor disabled by THERMAL_GOVERNOR_ENABLE=0');
      ctx.health.set('ok', 'disabled (THERMAL_GOVERNOR_ENABLE=0)');
      return;
    }
    const thresholds = checkThermalThresholds({ warnC: c.THERMAL_WARN_C, criticalC: c.THERMAL_CRITICAL_C, hysteresisC: c.THERMAL_HYSTERESIS_C });
    const pipeline = ctx.services.get(DetectionPipelineToken);
    const die = ctx.services.get(DieTemperatureToken);
    const governor = new Governor({
      thresholds,
      policy: { warnStrideFps: c.THERMAL_WARN_STRIDE_FPS },
      applyThrottle: (throttle) => pipeline.setThrottle(throttle),
      onListenerError: (err) => ctx.log.error({ err: toLookoutError(err) }, 'thermal state listener failed'),
    });
    governor.onChange((state, celsius) => {
      ctx.log.info({ thermal_state: state, celsius }, 'thermal state changed');
      ctx.health.set(state === 'NORMAL' ? 'ok' : 'degraded', state === 'NORMAL' ? undefined : `${state} at ${celsius} C`);
    });
    const feed = (celsius: number): void => {
      try {
        governor.feed(celsius);
      } catch (err) {
        // A bad reading changes nothing: the last state stands until a good one comes.
        ctx.log.warn({ code: toLookoutError(err).code }, toLookoutError(err).message);
      }
    };
    // Provided before the first reading so the status plugin sees the state the device starts in.
    ctx.services.provide(ThermalGovernorToken, governor);
    const first = die.current();
    if (first !== null) feed(first);
    const off = die.onReading(feed);
    ctx.health.set(governor.state() === 'NORMAL' ? 'ok' : 'degraded', governor.state());
    ctx.log.info({ ...thresholds, warnStrideFps: c.THERMAL_WARN_STRIDE_FPS, state: governor.state() }, 'thermal governor started');
    return {
      stop() {
        off();
        // Leaving the detector throttled would outlive the governor that could lift it.
        pipeline.setThrottle({ suspended: false });
      },
    };
  },
});

export { ThermalGovernorToken, type ThermalGovernor, type ThermalState } from './service.js';
export { Governor, type GovernorOptions } from './governor.js';
export {
  DEFAULT_THERMAL_THRESHOLDS,
  ThermalStateMachine,
  checkThermalThresholds,
  nextThermalState,
  throttleFor,
  type ThermalThresholds,
  type ThrottlePolicy,
} from './governor-state-machine.js';
