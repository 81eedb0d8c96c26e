import type { RegisteredDevice } from '../../registry/src/service.js';
import { a2aError } from './a2a-errors.js';

/**
 * Where the hub reaches a registered device's sidecar: the host of its tool URL (the address the
 * registry vetted: named in the registry file, or announced inside the device networks) and the
 * sidecar port its hello announced. A device the hub may not contact has no tool URL and the registry
 * has refused it already (target_not_allowed); one without a sidecar port is no_sidecar.
 */
export function sidecarAddress(device: RegisteredDevice): { host: string; port: number } {
  const port = device.ports?.sidecar;
  if (typeof port !== 'number') {
    throw a2aError('no_sidecar', `${device.deviceId} announced no peer sidecar port (ports.sidecar) in its hello`, { device_id: device.deviceId });
  }
  if (device.toolUrl === null) {
    throw a2aError('no_sidecar', `${device.deviceId} has no address the hub may contact: ${device.unreachableReason ?? 'none announced'}`, {
      device_id: device.deviceId,
    });
  }
  return { host: new URL(device.toolUrl).hostname, port };
}
