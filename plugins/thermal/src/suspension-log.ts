import type { AutomationEntry } from 'lookout/core';
import type { ThermalState } from './service.js';

export interface SuspensionChange {
  state: ThermalState;
  celsius: number;
  /** The suspension now in force; null once detection resumed. */
  suspension: { since: string; reason: string } | null;
}

/** The automation_log entry of a thermal suspension or resume of the detector (the status plugin publishes it). */
export function suspensionLogEntry(change: SuspensionChange): AutomationEntry {
  const suspended = change.suspension !== null;
  return {
    action: suspended ? 'thermal_suspend' : 'thermal_resume',
    plugin: 'thermal',
    trigger: change.state,
    outcome: 'ok',
    message: `detection ${suspended ? 'suspended' : 'resumed'}: ${change.state} at ${change.celsius} C`,
    details: { thermal_state: change.state, celsius: change.celsius, ...(change.suspension ? { since: change.suspension.since } : {}) },
  };
}
