import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Plugin } from '../plugin/context.js';
import { packageRoot } from '../paths/package-root.js';
import { importPlugin, readImage, type FirstPartyFolder } from './load-image.js';

/** Every plugin the project's device images and hub plugin set carry (for their error codes, `lookout plugins`). */
export async function firstPartyPlugins(): Promise<Plugin[]> {
  const configs = join(packageRoot(), 'configs');
  const sets: { file: string; folder: FirstPartyFolder }[] = (await readdir(join(configs, 'images')))
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ file: join(configs, 'images', f), folder: 'plugins' }));
  sets.push({ file: join(configs, 'hub', 'plugins.json'), folder: 'hub/plugins' });
  const byName = new Map<string, Plugin>();
  for (const { file, folder } of sets) {
    const { image } = await readImage(file);
    for (const entry of image.plugins) {
      const plugin = await importPlugin(entry, dirname(file), file, folder);
      byName.set(plugin.name, plugin);
    }
  }
  return [...byName.values()];
}
