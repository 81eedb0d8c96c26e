import { serviceToken } from 'lookout/core';

export type ThermalState = 'NORMAL' | 'THERMAL_WARN' | 'THERMAL_CRITICAL';

/** Provided by the thermal governor (layer 4); the status plugin publishes it. */
export interface ThermalGovernor {
  state(): ThermalState;
  onChange(listener: (state: ThermalState, celsius: number) => void): () => void;
}

export const ThermalGovernorToken = serviceToken<ThermalGovernor>('thermal-governor');
