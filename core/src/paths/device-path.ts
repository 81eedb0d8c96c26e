import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LookoutError } from '../errors/lookout-error.js';

/**
 * The spec's device paths (`/data/config/...`, `/app-storage/...`) under a data root: `/` on a
 * device, a development folder elsewhere. The result never leaves the root.
 */
export function devicePath(dataDir: string, specPath: string): string {
  const root = resolve(dataDir);
  const full = resolve(join(root, isAbsolute(specPath) ? specPath.slice(1) : specPath));
  const rel = relative(root, full);
  // `..` as a whole first segment escapes; a name such as `..v2.onnx` does not.
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new LookoutError('forbidden', `path "${specPath}" escapes the data root`, { details: { path: specPath } });
  }
  return full;
}

/** The spec's fixed device paths, to pass to `devicePath` with the runtime's data root. */
export const DEVICE_PATHS = {
  durableLayerEnv: '/data/config/edge_v3_layer.env',
  mirrorLayerEnv: '/app-storage/config/edge_v3_layer.env',
  peerCert: '/data/config/shadow_peer.crt',
  peerKey: '/data/config/shadow_peer.key',
  /** The fleet CA certificate the sidecar pins (issued by `lookout certs`; never its key). */
  fleetCa: '/data/config/fleet_ca.crt',
  /** The mesh key when MESH_KEY is not set (mode 0600). */
  meshKey: '/data/config/mesh.key',
  visionEndpoint: '/data/config/phantom_vision_endpoint.json',
  trackerProfile: '/etc/oak-agent/profile.env',
  models: '/data/models',
  bakedModels: '/app/models',
  recordings: '/data/recordings',
  extRecordings: '/data/ext-recordings',
} as const;
