import { z } from 'zod';
import { LookoutError, definePlugin, deviceInfo, toLookoutError } from 'lookout/core';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { DieTemperatureToken, type DieTemperature } from '../../die-temp/src/service.js';
import { Governor } from './governor.js';
import { suspensionLogEntry } from './suspension-log.js';
import { ThermalGovernorToken, type ThermalGovernor } from './service.js';

export const ThermalConfigSchema = z.object({
  /** The layer 4 env files set it; 0 keeps the plugin loaded but never throttles (the state still follows the die). */
  THERMAL_GOVERNOR_ENABLE: z.coerce.number().int().min(0).max(1).default(1),
  /** Detector stride while THERMAL_WARN (RF_DETR_STRIDE_FPS applies again at NORMAL). */
  THERMAL_WARN_STRIDE_FPS: z.coerce.number().positive().max(60).default(5),
});

/** THERMAL_GOVERNOR_ENABLE=0: the die's state as it is, and no action on it. */
function observerOnly(die: DieTemperature): ThermalGovernor {
  return { state: () => die.thermal().state, onChange: (listener) => die.onThermalChange(listener), suspension: () => null };
}

/**
 * Layer 4: the thermal governor. The die-temp plugin computes the thermal state at every layer
 * (thresholds THERMAL_WARN_C, THERMAL_CRITICAL_C, THERMAL_HYSTERESIS_C); acting on it is this
 * plugin's: on a change the detector is throttled (lower stride at THERMAL_WARN, suspended at
 * THERMAL_CRITICAL) and listeners hear of it (the status plugin republishes its retained status).
 */
export default definePlugin({
  name: 'thermal',
  version: '1.0.0',
  core: '^1',
  description: 'thermal governor: throttles the detector at THERMAL_WARN and suspends it at THERMAL_CRITICAL',
  layer: 'layer4',
  requires: [DieTemperatureToken, DetectionPipelineToken],
  config: ThermalConfigSchema,
  provides: [ThermalGovernorToken],
  start(ctx) {
    const c = ctx.config;
    const die = ctx.services.get(DieTemperatureToken);
    if (c.THERMAL_GOVERNOR_ENABLE !== 1) {
      ctx.services.provide(ThermalGovernorToken, observerOnly(die));
      ctx.log.info('thermal governor disabled by THERMAL_GOVERNOR_ENABLE=0');
      ctx.health.set('ok', 'disabled (THERMAL_GOVERNOR_ENABLE=0)');
      return;
    }
    const initial = die.thermal();
    // A governor with contradicting thresholds would act on a state nobody can trust.
    if (initial.unknown === 'thresholds_invalid') throw new LookoutError('config_invalid', initial.reason ?? 'thermal thresholds invalid');
    const pipeline = ctx.services.get(DetectionPipelineToken);
    const governor = new Governor({
      policy: { warnStrideFps: c.THERMAL_WARN_STRIDE_FPS },
      applyThrottle: (throttle) => pipeline.setThrottle(throttle),
      onListenerError: (err) => ctx.log.error({ err: toLookoutError(err) }, 'thermal state listener failed'),
      now: () => ctx.clock.now(),
    });
    let suspendedBefore = false;
    governor.onChange((state, celsius) => {
      ctx.log.info({ thermal_state: state, celsius }, 'thermal state changed');
      // Only a suspension or a resume is an automation the fleet hears of: a stride change is not.
      const suspension = governor.suspension();
      if ((suspension !== null) !== suspendedBefore) deviceInfo(ctx.runtime).reportAutomation(suspensionLogEntry({ state, celsius, suspension }));
      suspendedBefore = suspension !== null;
      ctx.health.set(state === 'NORMAL' ? 'ok' : 'degraded', state === 'NORMAL' ? undefined : `${state} at ${celsius} C`);
    });
    // Provided before the first state so the status plugin sees the state the device starts in.
    ctx.services.provide(ThermalGovernorToken, governor);
    const celsius = die.current();
    if (initial.state !== null && celsius !== null) governor.apply(initial.state, celsius);
    const off = die.onThermalChange((state, reading) => governor.apply(state, reading));
    ctx.health.set(governor.state() === 'NORMAL' || governor.state() === null ? 'ok' : 'degraded', governor.state() ?? initial.reason ?? undefined);
    ctx.log.info({ warnStrideFps: c.THERMAL_WARN_STRIDE_FPS, state: governor.state() }, 'thermal governor started');
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
export { throttleFor, type ThrottlePolicy } from './throttle-policy.js';
