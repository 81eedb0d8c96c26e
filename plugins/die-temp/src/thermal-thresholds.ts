import { LookoutError } from 'lookout/core';

/** When the die is too hot: the thresholds of the thermal states, in degrees Celsius. */
export interface ThermalThresholds {
  warnC: number;
  criticalC: number;
  hysteresisC: number;
}

export const DEFAULT_THERMAL_THRESHOLDS: Readonly<ThermalThresholds> = Object.freeze({ warnC: 75, criticalC: 85, hysteresisC: 5 });

/** The env keys the thresholds come from, for messages that name them. */
const KEY = { warnC: 'THERMAL_WARN_C', criticalC: 'THERMAL_CRITICAL_C', hysteresisC: 'THERMAL_HYSTERESIS_C' } as const satisfies Record<
  keyof ThermalThresholds,
  string
>;

export function checkThermalThresholds(t: ThermalThresholds): ThermalThresholds {
  for (const [key, v] of Object.entries(t) as [keyof ThermalThresholds, number][]) {
    if (!Number.isFinite(v)) {
      throw new LookoutError('config_invalid', `${KEY[key]} (thermal threshold ${key}) must be a finite number of degrees Celsius, got ${v}`);
    }
  }
  if (t.warnC >= t.criticalC) {
    throw new LookoutError('config_invalid', `THERMAL_WARN_C (${t.warnC} C) must be below THERMAL_CRITICAL_C (${t.criticalC} C)`);
  }
  if (t.hysteresisC < 0) throw new LookoutError('config_invalid', `THERMAL_HYSTERESIS_C must not be negative, got ${t.hysteresisC}`);
  return t;
}

export type ThermalThresholdKeys = Partial<Record<(typeof KEY)[keyof ThermalThresholds], string>>;

/**
 * The thresholds from the layer env (unset keys take their defaults). Read here rather than by the
 * config schema because a bad threshold must not take the die temperature down with it: the state
 * becomes unknown with this reason, the temperature is still reported, and the governor refuses to
 * act on it.
 */
export function thermalThresholdsFromEnv(env: ThermalThresholdKeys): ThermalThresholds {
  const read = (key: keyof ThermalThresholds): number => {
    const raw = env[KEY[key]];
    if (raw === undefined || raw.trim() === '') return DEFAULT_THERMAL_THRESHOLDS[key];
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new LookoutError('config_invalid', `${KEY[key]}=${JSON.stringify(raw)} is not a number of degrees Celsius`);
    return value;
  };
  return checkThermalThresholds({ warnC: read('warnC'), criticalC: read('criticalC'), hysteresisC: read('hysteresisC') });
}
