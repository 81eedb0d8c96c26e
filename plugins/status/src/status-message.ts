import { type StatusMessage } from 'lookout/core';
import type { ThermalState } from '../../thermal/src/service.js';

export function statusMessage(
  deviceId: string,
  state: 'online' | 'offline',
  thermal: ThermalState,
  dieTempC: number | null,
  extra: Record<string, unknown> = {},
): StatusMessage {
  return {
    state,
    thermal_state: thermal,
    die_temp_c: dieTempC,
    timestamp: new Date().toISOString(),
    device_id: deviceId,
    ...extra,
  };
}
