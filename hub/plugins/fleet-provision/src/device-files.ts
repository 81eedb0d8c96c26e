import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEVICE_PATHS, LookoutError, packageRoot, parseEnv, resolveLayer } from 'lookout/core';
import { deviceBusCredentials, deviceToolToken, fleetMeshKey } from 'lookout/lib/auth';

/** Where the device's service reads its settings (deploy/lookout-edge.service: EnvironmentFile). */
export const EDGE_ENV_PATH = '/etc/lookout/edge.env';
export const SECRET_MODE = 0o600;
export const PUBLIC_MODE = 0o644;

/** A file a step puts on the device: its spec path, content and mode. */
export interface DeviceFile {
  path: string;
  content: string;
  mode: number;
}

/** A word for an env file: double-quoted, its quotes and backslashes escaped (what core's parseEnv and systemd both read). */
function envValue(value: string): string {
  return /^[A-Za-z0-9_./:@+,=-]*$/.test(value) ? value : `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The device's service settings: its id and broker (LOOKOUT_EDGE_ARGS), its bus user and password and
 * its tool token, all derived from the fleet secret as the hub's broker and tools proxy derive them.
 * Mode 0600: it holds the device's secrets.
 */
export function edgeEnvFile(fleetSecret: string, deviceId: string, mqttUrl: string): DeviceFile {
  const bus = deviceBusCredentials(fleetSecret, deviceId);
  const lines = [
    '# Written by the hub (POST /fleet/provision-shadow): the device id and broker, its bus credentials and tool token.',
    `LOOKOUT_EDGE_ARGS=${envValue(`--device-id ${deviceId} --mqtt ${mqttUrl}`)}`,
    `LOOKOUT_MQTT_USERNAME=${envValue(bus.username)}`,
    `LOOKOUT_MQTT_PASSWORD=${envValue(bus.password)}`,
    `LOOKOUT_TOOL_TOKEN=${envValue(deviceToolToken(fleetSecret, deviceId))}`,
  ];
  return { path: EDGE_ENV_PATH, content: `${lines.join('\n')}\n`, mode: SECRET_MODE };
}

/** The fleet's mesh key where the peer-mesh plugin reads it when MESH_KEY is unset (mode 0600). */
export function meshKeyFile(fleetSecret: string): DeviceFile {
  return { path: DEVICE_PATHS.meshKey, content: `${fleetMeshKey(fleetSecret)}\n`, mode: SECRET_MODE };
}

/**
 * The shipped env file of a layer (configs/layers/*.env), found by the layer its EDGE_V3_LAYER names,
 * written to the durable path and its writable mirror as a device's own layer switch does.
 */
export async function layerEnvFiles(alias: string): Promise<DeviceFile[]> {
  const layer = resolveLayer(alias);
  const dir = join(packageRoot(), 'configs', 'layers');
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.env')).sort()) {
    const content = await readFile(join(dir, name), 'utf8');
    const named = parseEnv(content, name).EDGE_V3_LAYER;
    if (named !== undefined && resolveLayer(named) === layer) {
      return [
        { path: DEVICE_PATHS.mirrorLayerEnv, content, mode: PUBLIC_MODE },
        { path: DEVICE_PATHS.durableLayerEnv, content, mode: PUBLIC_MODE },
      ];
    }
  }
  throw new LookoutError('layer_unknown', `no shipped env file for the layer ${layer} in ${dir}`, { details: { layer } });
}
