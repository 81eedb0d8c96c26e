import { deriveDeviceSecret } from './device-credentials.js';

/**
 * Fleet-wide keys derived from the hub's fleet secret, so that a fleet started from one hub needs no
 * key distribution of its own; a fleet may set MESH_KEY / A2A_HMAC_KEY instead.
 */

/** The peer mesh's key: one for every device (the mesh authenticates membership, not which device). */
export function fleetMeshKey(fleetSecret: string): string {
  return deriveDeviceSecret(fleetSecret, 'mesh', 'fleet');
}

/** The key signed peer queries (POST /a2a/query) are checked under. */
export function fleetA2aKey(fleetSecret: string): string {
  return deriveDeviceSecret(fleetSecret, 'a2a', 'fleet');
}
