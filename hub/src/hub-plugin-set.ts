import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readImage, importPlugin } from '../../core/src/images/load-image.js';
import { LookoutError } from '../../core/src/errors/lookout-error.js';
import type { Plugin } from '../../core/src/plugin/context.js';
import { validateManifest } from '../../core/src/plugin/loader.js';
import { packageRoot } from '../../core/src/paths/package-root.js';

/** The default plugin set of the hub, as device images choose a device's plugins. */
export function defaultPluginSetPath(): string {
  return join(packageRoot(), 'configs', 'hub', 'plugins.json');
}

const FIRST_PARTY = /^[a-z][a-z0-9-]*$/;

/**
 * Reads a hub plugin set: the device image format (`{ name, description?, plugins: [...] }`), whose
 * entries are first-party hub plugins (`bus-cache`, found under hub/plugins), paths to third-party
 * plugin modules (relative to the set file) or package names.
 */
export async function loadHubPluginSet(path = defaultPluginSetPath()): Promise<{ name: string; path: string; plugins: Plugin[] }> {
  const { image, path: file } = await readImage(resolve(path));
  const plugins: Plugin[] = [];
  for (const entry of image.plugins) {
    const own = FIRST_PARTY.test(entry) ? join(packageRoot(), 'dist', 'hub', 'plugins', entry, 'src', 'index.js') : undefined;
    if (own && existsSync(own)) {
      const mod = (await import(pathToFileURL(own).href)) as { default?: unknown };
      plugins.push(validateManifest(mod.default, entry));
    } else {
      plugins.push(await importPlugin(entry, dirname(file), file));
    }
  }
  if (plugins.length === 0) throw new LookoutError('image_invalid', `hub plugin set ${file} names no plugin`, { details: { file } });
  return { name: image.name, path: file, plugins };
}
