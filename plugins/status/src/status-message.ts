import { type StatusMessage } from 'lookout/core/contracts';
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

/**
 * The last-will: set when the device connects, sent by the broker whenever the connection drops,
 * so it knows nothing of that later moment. It says when it was set (`will_set_at`) and leaves the
 * temperature and thermal state unknown rather than passing the connect-time ones off as current;
 * readers date it by when it arrived (the hub stamps `offline_since`).
 */
export function lastWillMessage(deviceId: string, setAt: Date = new Date()): StatusMessage {
  const unknown = 'unknown: the connection was lost, and the broker sent this last-will, set when the device connected';
  return {
    state: 'offline',
    reason: 'connection_lost',
    device_id: deviceId,
    will_set_at: setAt.toISOString(),
    thermal_state: null,
    thermal_state_reason: unknown,
    die_temp_c: null,
    die_temp_reason: unknown,
  };
}
