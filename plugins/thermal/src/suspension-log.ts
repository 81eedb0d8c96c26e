import { toLookoutError, type Logger, type PluginBus } from 'lookout/core';
import { AutomationLogEventSchema, type AutomationLogEvent } from 'lookout/core/contracts';
import type { ThermalState } from './service.js';

export interface SuspensionChange {
  state: ThermalState;
  celsius: number;
  /** The suspension now in force; null once detection resumed. */
  suspension: { since: string; reason: string } | null;
}

/** The events/automation_log message of a thermal suspension or resume of the detector. */
export function suspensionLogMessage(change: SuspensionChange, now = new Date()): AutomationLogEvent {
  const suspended = change.suspension !== null;
  return AutomationLogEventSchema.parse({
    timestamp: now.toISOString(),
    type: 'automation_log',
    action: suspended ? 'thermal_suspend' : 'thermal_resume',
    plugin: 'thermal',
    trigger: change.state,
    outcome: 'ok',
    message: suspended ? `detection suspended: ${change.state} at ${change.celsius} C` : `detection resumed: ${change.state} at ${change.celsius} C`,
    details: { thermal_state: change.state, celsius: change.celsius, ...(change.suspension ? { since: change.suspension.since } : {}) },
  });
}

/** Publishes it; a bus that is down loses the log (logged), never the throttle. */
export function publishSuspensionLog(bus: PluginBus, log: Logger, change: SuspensionChange): void {
  bus.publish('events/automation_log', suspensionLogMessage(change)).catch((err: unknown) => {
    log.warn({ code: toLookoutError(err).code }, 'automation_log of a thermal suspension not published');
  });
}
