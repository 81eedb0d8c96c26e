import { serviceToken } from 'lookout/core';
import type { ThermalState } from '../../die-temp/src/service.js';

/** The die's thermal state is the die-temp plugin's (every layer); the governor acts on it. */
export type { ThermalState } from '../../die-temp/src/service.js';

/** Provided by the thermal governor (layer 4), which throttles the detector on the die's thermal state. */
export interface ThermalGovernor {
  /** The state the governor last acted on; null before the die's state is known. */
  state(): ThermalState | null;
  /** Called after the governor acted on a change (the detector already obeys it). */
  onChange(listener: (state: ThermalState, celsius: number) => void): () => void;
  /** While it suspends neural work (THERMAL_CRITICAL): since when (ISO 8601) and why; else null. */
  suspension(): { since: string; reason: string } | null;
}

export const ThermalGovernorToken = serviceToken<ThermalGovernor>('thermal-governor');
