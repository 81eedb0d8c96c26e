import { LookoutError } from 'lookout/core';
import type { ThermalState } from './service.js';
import { checkThermalThresholds, DEFAULT_THERMAL_THRESHOLDS, type ThermalThresholds } from './thermal-thresholds.js';

/**
 * The state after a reading, given the state before it. A state is entered at or above its
 * threshold and left only once the temperature is below threshold - hysteresis, so a reading that
 * hovers around a threshold does not switch the detector on and off every sample.
 */
export function nextThermalState(current: ThermalState, celsius: number, t: ThermalThresholds): ThermalState {
  if (!Number.isFinite(celsius)) throw new LookoutError('argument_invalid', `die temperature must be a finite number, got ${celsius}`);
  if (celsius >= t.criticalC) return 'THERMAL_CRITICAL';
  // Holding bands: a state stays while the reading is within hysteresis below its threshold.
  if (current === 'THERMAL_CRITICAL' && celsius >= t.criticalC - t.hysteresisC) return 'THERMAL_CRITICAL';
  if (celsius >= t.warnC) return 'THERMAL_WARN';
  if (current !== 'NORMAL' && celsius >= t.warnC - t.hysteresisC) return 'THERMAL_WARN';
  return 'NORMAL';
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
