import { LookoutError } from 'lookout/core';
import { busPassword, busRoleOf, isReservedBusId, RESERVED_BUS_ID_PREFIX } from 'lookout/lib/auth';

/**
 * A device's bus user name (its id) and password. Refuses an id that names no device (the hub's and
 * the operator's reserved user names and client ids, or an id that is not one topic level): handing
 * those out would hand out their rights, or the hub's session (a device's client id is its id).
 */
export function deviceBusCredentials(fleetSecret: string, deviceId: string): { username: string; password: string } {
  if (isReservedBusId(deviceId)) {
    throw new LookoutError(
      'device_id_reserved',
      `"${deviceId}" cannot be a device's bus identity: ids starting with "${RESERVED_BUS_ID_PREFIX}" are reserved for the hub's and the operator's own clients`,
      {
        details: { device_id: deviceId, reserved_prefix: RESERVED_BUS_ID_PREFIX },
      },
    );
  }
  if (busRoleOf(deviceId)?.kind !== 'device') {
    throw new LookoutError('config_invalid', `"${deviceId}" cannot be a device's bus identity (a reserved user name or not one topic level)`, {
      details: { device_id: deviceId },
    });
  }
  return { username: deviceId, password: busPassword(fleetSecret, deviceId) };
}
