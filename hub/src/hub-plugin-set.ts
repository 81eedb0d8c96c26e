import { dirname, join, resolve } from 'node:path';
import { readImage, importPlugin } from 'lookout/core/host';
import { LookoutError, type Plugin, packageRoot } from 'lookout/core';

/** The default plugin set of the hub, as device images choose a device's plugins. */
export function defaultPluginSetPath(): string {
  return join(packageRoot(), 'configs', 'hub', 'plugins.json');
}

/**
 * Reads a hub plugin set: the device image format (`{ name, description?, plugins: [...] }`), whose
 * entries are first-party hub plugins (`bus-cache`, found under hub/plugins), paths to third-party
 * plugin modules (relative to the set file) or package names.
 */
export async function loadHubPluginSet(path = defaultPluginSetPath()): Promise<{ name: string; path: string; plugins: Plugin[]; essential: string[] }> {
  const { image, path: file } = await readImage(resolve(path));
  const plugins: Plugin[] = [];
  for (const entry of image.plugins) plugins.push(await importPlugin(entry, dirname(file), file, 'hub/plugins'));
  if (plugins.length === 0) throw new LookoutError('image_invalid', `hub plugin set ${file} names no plugin`, { details: { file } });
  return { name: image.name, path: file, plugins, essential: image.essential ?? [] };
}
