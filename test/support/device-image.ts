import type { ImageSpec } from '../../edge/src/device-runtime.js';
import cameraProfile from '../../plugins/camera-profile/src/index.js';
import dieTemp from '../../plugins/die-temp/src/index.js';
import firmware from '../../plugins/firmware/src/index.js';
import identity from '../../plugins/identity/src/index.js';
import status from '../../plugins/status/src/index.js';
import systemHealth from '../../plugins/system-health/src/index.js';

/** The base plugins every layer carries, as an in-memory image (tests that need no other plugin). */
export function baseImage(name = 'base', role = 'camera'): ImageSpec {
  return { name, role, plugins: [dieTemp, identity, systemHealth, status, firmware, cameraProfile] };
}

/** The tools a device with the base plugins serves (theirs, and the host's restart_plugin). */
export const BASE_TOOLS = [
  'announce_identity',
  'check_firmware_update',
  'get_camera_profile',
  'get_device_health',
  'get_device_identity',
  'get_firmware_status',
  'get_system_health',
  'restart_plugin',
  'set_camera_profile',
];
