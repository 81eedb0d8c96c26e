import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { DEVICE_PATHS, devicePath } from './device-path.js';

/**
 * The recordings root (spec 02): `/data/ext-recordings` when that external mount exists, else
 * `/data/recordings`, both under the device's data root; RECORDINGS_DIR overrides. The recorder, system-health and
 * `lookout prune-recordings` resolve it the same way.
 */
export function recordingsRoot(dataDir: string, override?: string): string {
  if (override) return resolve(override);
  const ext = devicePath(dataDir, DEVICE_PATHS.extRecordings);
  try {
    if (statSync(ext).isDirectory()) return ext;
  } catch {
    // no external mount
  }
  return devicePath(dataDir, DEVICE_PATHS.recordings);
}
