import { deriveDeviceSecret } from './device-credentials.js';

/**
 * Fleet-wide keys derived from the hub's fleet secret, so that a fleet started from one hub needs no
 * key distribution of its own; a fleet may set MESH_KEY / A2A_HMAC_KEY instead.
 */

/**
 * The peer mesh's fleet key: one for every device. It proves membership of the fleet only (it MACs
 * introductions and salts the per-pair keys); which device speaks is proved by the device's fleet
 * certificate, whose key each pair of devices derives its own key from (plugins/peer-mesh mesh-identity.ts).
 */
export function fleetMeshKey(fleetSecret: string): string {
  return deriveDeviceSecret(fleetSecret, 'mesh', 'fleet');
}

/** The key signed peer queries (POST /a2a/query) are checked under. */
export function fleetA2aKey(fleetSecret: string): string {
  return deriveDeviceSecret(fleetSecret, 'a2a', 'fleet');
}
