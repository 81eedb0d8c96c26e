import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LookoutError, resolveLayer } from 'lookout/core';
import type { DescriberEndpoint } from 'lookout/builder-plugins/track-l';

/** The device settings of each describer a promoted Track L model stands in for (`<prefix>_URL`, `<prefix>_MODEL`). */
const DESCRIBER_SETTINGS = ['SAFETY_DESCRIBER', 'VIDEO_DESCRIBER'] as const;

/** The shipped layer env files (configs/layers/<layer>.env of this checkout). */
const LAYERS_DIR = fileURLToPath(new URL('../../../../../configs/layers/', import.meta.url));

/**
 * The layer a deploy applies, carrying the promoted Track L model as the devices' describers (spec
 * 02, Track L: the describers of video_understand and of the agent surface): the shipped layer env
 * plus SAFETY_DESCRIBER_URL/_MODEL (conversational_safety_query phrases its answers there, its counts
 * checked) and VIDEO_DESCRIBER_URL/_MODEL (the recorder's video_understand descriptions). Devices take
 * configuration through the layer env apply-layer writes, so the endpoint goes the same way, checked by
 * apply-layer against the plugins' schemas. A layer file that names a describer itself keeps it (an
 * explicit setting wins), as does a device whose own environment sets one. Returns apply-layer's
 * `--layer-env <file>`, or nothing to add.
 */
export async function describerLayerEnv(layer: string, describer: DescriberEndpoint | null, dir: string): Promise<string[]> {
  if (!describer) return [];
  const { name, text } = await shippedLayer(layer);
  const added = DESCRIBER_SETTINGS.filter((prefix) => !new RegExp(`^\\s*${prefix}_URL\\s*=`, 'm').test(text))
    .map((prefix) => `${prefix}_URL=${describer.url}\n${prefix}_MODEL=${describer.model}\n`)
    .join('');
  if (!added) return [];
  const env = `${text.replace(/\n?$/, '\n')}# The promoted Track L model (${describer.artifact}), added by the builder's deploy.\n${added}`;
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${name}-${createHash('sha256').update(env).digest('hex').slice(0, 16)}.env`);
  await writeFile(file, env);
  return ['--layer-env', file];
}

/** The shipped env file whose EDGE_V3_LAYER is `layer` (an alias or the canonical name). */
async function shippedLayer(layer: string): Promise<{ name: string; text: string }> {
  const id = resolveLayer(layer);
  for (const f of (await readdir(LAYERS_DIR)).filter((n) => n.endsWith('.env')).sort()) {
    const text = await readFile(join(LAYERS_DIR, f), 'utf8');
    const named = /^EDGE_V3_LAYER=(\S+)/m.exec(text)?.[1];
    if (named && resolveLayer(named) === id) return { name: f.slice(0, -'.env'.length), text };
  }
  throw new LookoutError('config_invalid', `no shipped layer env for ${layer} in ${LAYERS_DIR}`, { details: { layer } });
}
