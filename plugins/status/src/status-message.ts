import { type StatusMessage } from 'lookout/core';
import type { ThermalReading } from '../../die-temp/src/service.js';

/** An online or offline status of a running device: what it knows now, unknowns null with their reason. */
export function statusMessage(
  deviceId: string,
  state: 'online' | 'offline',
  thermal: ThermalReading,
  dieTempC: number | null,
  extra: Record<string, unknown> = {},
): StatusMessage {
  return {
    state,
    thermal_state: thermal.state,
    thermal_state_reason: thermal.reason,
    die_temp_c: dieTempC,
    timestamp: new Date().toISOString(),
    device_id: deviceId,
    ...extra,
  };
}
