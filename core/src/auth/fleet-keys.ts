import { deriveDeviceSecret } from './device-credentials.js';

/**
 * The peer mesh's key for a fleet whose hub holds the fleet secret: one key for every device (the
 * mesh authenticates membership, not which device), derived so that a fleet started from one hub
 * needs no key distribution of its own. A fleet may set MESH_KEY on its devices instead.
 */
export function fleetMeshKey(fleetSecret: string): string {
  return deriveDeviceSecret(fleetSecret, 'mesh', 'fleet');
}
