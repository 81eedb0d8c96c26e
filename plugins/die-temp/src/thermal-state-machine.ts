import type { DetectionThrottle } from '../../detector/src/service.js';
import { LookoutError } from 'lookout/core';
import type { ThermalState } from './service.js';

/**
 * When the die is too hot. A state is entered at or above its threshold and left only once the
 * temperature is below threshold - hysteresis, so a reading that hovers around a threshold does not
 * switch the detector on and off every sample.
 */
export interface ThermalThresholds {
  warnC: number;
  criticalC: number;
  hysteresisC: number;
}

export const DEFAULT_THERMAL_THRESHOLDS: Readonly<ThermalThresholds> = Object.freeze({ warnC: 75, criticalC: 85, hysteresisC: 5 });

export function checkThermalThresholds(t: ThermalThresholds): ThermalThresholds {
  for (const [key, v] of Object.entries(t)) {
    if (!Number.isFinite(v)) throw new LookoutError('config_invalid', `thermal threshold ${key} must be a finite number of degrees Celsius, got ${v}`);
  }
  if (t.warnC >= t.criticalC) {
    throw new LookoutError('config_invalid', `thermal warn threshold (${t.warnC} C) must be below the critical one (${t.criticalC} C)`);
  }
  if (t.hysteresisC < 0) throw new LookoutError('config_invalid', `thermal hysteresis must not be negative, got ${t.hysteresisC}`);
  return t;
}

/** The state after a reading, given the state before it. */
export function nextThermalState(current: ThermalState, celsius: number, t: ThermalThresholds): ThermalState {
  if (!Number.isFinite(celsius)) throw new LookoutError('argument_invalid', `die temperature must be a finite number, got ${celsius}`);
  if (celsius >= t.criticalC) return 'THERMAL_CRITICAL';
  // Holding bands: a state stays while the reading is within hysteresis below its threshold.
  if (current === 'THERMAL_CRITICAL' && celsius >= t.criticalC - t.hysteresisC) return 'THERMAL_CRITICAL';
  if (celsius >= t.warnC) return 'THERMAL_WARN';
  if (current !== 'NORMAL' && celsius >= t.warnC - t.hysteresisC) return 'THERMAL_WARN';
  return 'NORMAL';
}

export interface ThrottlePolicy {
  /** Detector stride while THERMAL_WARN (frames per second). */
  warnStrideFps: number;
}

/** What the detector does in a state: full rate, a lowered stride, or no neural work at all. */
export function throttleFor(state: ThermalState, policy: ThrottlePolicy): DetectionThrottle {
  switch (state) {
    case 'NORMAL':
      return { suspended: false };
    case 'THERMAL_WARN':
      return { strideFps: policy.warnStrideFps, suspended: false };
    case 'THERMAL_CRITICAL':
      return { suspended: true };
  }
}

/** The state machine with its memory: feed readings, learn when the state changed. */
export class ThermalStateMachine {
  private current: ThermalState;

  constructor(
    readonly thresholds: ThermalThresholds = DEFAULT_THERMAL_THRESHOLDS,
    initial: ThermalState = 'NORMAL',
  ) {
    checkThermalThresholds(thresholds);
    this.current = initial;
  }

  get state(): ThermalState {
    return this.current;
  }

  feed(celsius: number): { state: ThermalState; previous: ThermalState; changed: boolean } {
    const previous = this.current;
    this.current = nextThermalState(previous, celsius, this.thresholds);
    return { state: this.current, previous, changed: this.current !== previous };
  }
}
