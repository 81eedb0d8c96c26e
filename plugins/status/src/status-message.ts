import type { StatusMessage } from '../../../core/src/contracts/status-message.js';
import type { ThermalState } from '../../thermal/src/service.js';

export function statusMessage(deviceId: string, state: 'online' | 'offline', thermal: ThermalState, dieTempC: number, extra: Record<string, unknown> = {}): StatusMessage {
  return {
    state,
    thermal_state: thermal,
    die_temp_c: dieTempC,
    timestamp: new Date().toISOString(),
    device_id: deviceId,
    ...extra,
  };
}
