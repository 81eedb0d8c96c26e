/**
 * A live simulated device that records (camera, H.265 encoder at 320x240 and 5 fps, 2 s chunks) on an
 * in-memory bus, its tool server on a free port asking for the token the hub derives from the tests'
 * fleet secret: the source a hub pulls chunks from over `GET /recordings/<file>`. Not a test file itself.
 */
import { join } from 'node:path';
import { deviceToolToken } from '../../lib/auth/tool-token.js';
import { MemoryBus } from '../../core/src/bus/memory-bus.js';
import { importPlugin } from '../../core/src/images/load-image.js';
import { createLogger } from '../../core/src/log/logger.js';
import { packageRoot } from '../../core/src/paths/package-root.js';
import { startDevice, type DeviceHandle } from '../../edge/src/device-runtime.js';
import { TEST_FLEET_SECRET } from './hub-helpers.js';

const PLUGINS = ['die-temp', 'identity', 'system-health', 'status', 'camera', 'encode', 'recorder'];

/** A hub's env without SSH credentials or local recordings whatever the test run's holds: the device's tool server is the source. */
export const NO_SSH = { DEVICE_PASSWORD: undefined, LOOKOUT_SSH_KEY_FILE: undefined, LOOKOUT_MEDIA_LOCAL_RECORDINGS: undefined };

/** The device keeps its data under `<dir>/device`; stop it with `stop()`. */
export async function startRecordingDevice(deviceId: string, dir: string): Promise<DeviceHandle> {
  const image = { name: 'recording-camera', role: 'camera', plugins: await Promise.all(PLUGINS.map((n) => importPlugin(n, packageRoot()))) };
  return startDevice({
    deviceId,
    image,
    layer: 'layer0',
    source: 'sim',
    dataDir: join(dir, 'device'),
    bus: new MemoryBus(),
    toolPort: 0,
    toolToken: deviceToolToken(TEST_FLEET_SECRET, deviceId),
    logger: createLogger({ level: 'silent' }),
    env: { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', CHUNK_SECONDS: '2', PATH: process.env.PATH },
  });
}

/** The port of the device's tool server (its recordings route). */
export function toolPortOf(device: DeviceHandle): number {
  return Number(new URL(device.toolUrl!).port);
}
