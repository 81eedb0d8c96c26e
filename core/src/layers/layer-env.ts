import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LookoutError } from '../errors/lookout-error.js';
import type { LayerId } from '../plugin/manifest.js';
import { writeFileAtomic } from '../paths/atomic-write.js';
import { DEVICE_PATHS, devicePath } from '../paths/device-path.js';
import { packageRoot } from '../paths/package-root.js';
import { parseEnv, readEnvFile } from './env-file.js';
import { DEFAULT_LAYER, LAYER_KEY, LAYERS, resolveLayer } from './layers.js';

export interface SelectedLayer {
  layer: LayerId;
  env: Record<string, string>;
  /** Where the env came from, for messages. */
  source: string;
}

/** The shipped env file of a layer (configs/layers/<canonical>.env). */
export function layerEnvPath(layer: LayerId): string {
  return join(packageRoot(), 'configs', 'layers', `${LAYERS[layer].canonical}.env`);
}

/** The shipped env file of a layer alias. */
export async function loadLayerEnv(alias: string): Promise<SelectedLayer> {
  const layer = resolveLayer(alias);
  const path = layerEnvPath(layer);
  return { layer, env: await readEnvFile(path), source: path };
}

/** An env file naming its layer in EDGE_V3_LAYER (a layer file, or the device's durable stack). */
export async function readLayerEnvFile(path: string): Promise<SelectedLayer> {
  const env = await readEnvFile(path);
  const named = env[LAYER_KEY];
  if (!named) {
    throw new LookoutError('env_file_invalid', `${path} does not name its layer: set ${LAYER_KEY} to one of layer0…layer5 or an alias`, {
      details: { source: path, key: LAYER_KEY },
    });
  }
  let layer: LayerId;
  try {
    layer = resolveLayer(named);
  } catch (err) {
    throw new LookoutError('layer_unknown', `${LAYER_KEY}=${named} in ${path}: ${(err as Error).message}`, { cause: err, details: { source: path } });
  }
  return { layer, env, source: path };
}

/**
 * Which layer runs (DESIGN.md): `--layer` or `--layer-env` if given, else the durable file under
 * the data root, else layer2, the default canary.
 */
export async function selectLayer(options: { layer?: string; layerEnvPath?: string; dataDir: string }): Promise<SelectedLayer> {
  if (options.layer && options.layerEnvPath) {
    throw new LookoutError('config_invalid', 'give either --layer or --layer-env, not both');
  }
  if (options.layer) return loadLayerEnv(options.layer);
  if (options.layerEnvPath) return readLayerEnvFile(options.layerEnvPath);
  const durable = devicePath(options.dataDir, DEVICE_PATHS.durableLayerEnv);
  if (existsSync(durable)) return readLayerEnvFile(durable);
  return loadLayerEnv(DEFAULT_LAYER);
}

/**
 * Applies a layer as a device does: the writable mirror first, then the durable file, each written
 * atomically, so a crash leaves either the old stack or the new one.
 */
export async function applyLayer(dataDir: string, alias: string): Promise<{ layer: LayerId; mirror: string; durable: string }> {
  const layer = resolveLayer(alias);
  const text = await readFile(layerEnvPath(layer), 'utf8');
  parseEnv(text, layerEnvPath(layer));
  const mirror = devicePath(dataDir, DEVICE_PATHS.mirrorLayerEnv);
  const durable = devicePath(dataDir, DEVICE_PATHS.durableLayerEnv);
  await writeFileAtomic(mirror, text);
  await writeFileAtomic(durable, text);
  return { layer, mirror, durable };
}
