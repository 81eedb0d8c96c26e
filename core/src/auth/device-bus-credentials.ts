import { LookoutError } from '../errors/lookout-error.js';
import { busPassword, busRoleOf } from './bus-acl.js';

/**
 * A device's bus user name (its id) and password. Refuses an id that names no device (the hub's and
 * the operator's reserved user names, or an id that is not one topic level): handing those out would
 * hand out their rights.
 */
export function deviceBusCredentials(fleetSecret: string, deviceId: string): { username: string; password: string } {
  if (busRoleOf(deviceId)?.kind !== 'device') {
    throw new LookoutError('config_invalid', `"${deviceId}" cannot be a device's bus identity (a reserved user name or not one topic level)`, {
      details: { device_id: deviceId },
    });
  }
  return { username: deviceId, password: busPassword(fleetSecret, deviceId) };
}
