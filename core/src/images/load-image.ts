import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { LookoutError } from '../errors/lookout-error.js';
import type { Plugin } from '../plugin/context.js';
import { validateManifest } from '../plugin/loader.js';
import { packageRoot } from '../paths/package-root.js';

/**
 * A device image: which plugins a device carries. Entries are first-party plugin names
 * (`detector`), paths to a third-party plugin module (relative to the image file), or package names.
 */
export const ImageSchema = z.object({
  name: z.string().min(1),
  description: z.string().optional(),
  role: z.string().optional(),
  plugins: z.array(z.string().min(1)).min(1),
  /** Plugins whose failure stops the device; any other failing plugin only degrades it. */
  essential: z.array(z.string().min(1)).optional(),
});
export type ImageFile = z.infer<typeof ImageSchema>;

export interface LoadedImage {
  name: string;
  path: string;
  role?: string;
  plugins: Plugin[];
  essential?: string[];
}

const FIRST_PARTY = /^[a-z][a-z0-9-]*$/;

export function imagePath(nameOrPath: string): string {
  if (FIRST_PARTY.test(nameOrPath)) return join(packageRoot(), 'configs', 'images', `${nameOrPath}.json`);
  return resolve(nameOrPath);
}

/** Reads and validates an image file (a first-party name or a path); throws `image_invalid` naming the problem. */
export async function readImage(nameOrPath: string): Promise<{ image: ImageFile; path: string }> {
  const path = imagePath(nameOrPath);
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new LookoutError('image_invalid', `cannot read image ${path}: ${(err as Error).message}`, { cause: err, details: { image: path } });
  }
  const parsed = ImageSchema.safeParse(raw);
  if (!parsed.success) {
    throw new LookoutError('image_invalid', `image ${path} is invalid: ${z.prettifyError(parsed.error)}`, {
      details: { image: path, issues: parsed.error.issues },
    });
  }
  return { image: parsed.data, path };
}

/** Reads an image and imports each of its plugins. */
export async function loadImage(nameOrPath: string): Promise<LoadedImage> {
  const { image, path } = await readImage(nameOrPath);
  const plugins: Plugin[] = [];
  for (const entry of image.plugins) plugins.push(await importPlugin(entry, dirname(path), path));
  return { name: image.name, path, plugins, ...(image.role ? { role: image.role } : {}), ...(image.essential ? { essential: image.essential } : {}) };
}

/** Imports one image entry and checks its manifest before any of its code runs beyond the import. */
export async function importPlugin(entry: string, baseDir: string, imageFile = 'the image', firstParty: FirstPartyFolder = 'plugins'): Promise<Plugin> {
  const specifier = resolveEntry(entry, baseDir, firstParty);
  if (!specifier) {
    throw new LookoutError(
      'plugin_not_found',
      `${imageFile} names the plugin "${entry}", which does not exist (no first-party plugin, file or package of that name)`,
      {
        details: { plugin: entry, image: imageFile },
      },
    );
  }
  let mod: { default?: unknown };
  try {
    mod = (await import(specifier)) as { default?: unknown };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && !entry.startsWith('.') && !isAbsolute(entry)) {
      throw new LookoutError('plugin_not_found', `${imageFile} names the plugin "${entry}", which cannot be found`, { cause: err, details: { plugin: entry } });
    }
    throw new LookoutError('plugin_manifest_invalid', `plugin "${entry}" cannot be imported: ${(err as Error).message}`, {
      cause: err,
      details: { plugin: entry },
    });
  }
  return validateManifest(mod.default, entry);
}

/** Where first-party plugins of a runtime live, relative to the package root (compiled under dist/). */
export type FirstPartyFolder = 'plugins' | 'hub/plugins';

function resolveEntry(entry: string, baseDir: string, firstParty: FirstPartyFolder): string | undefined {
  if (entry.startsWith('.') || isAbsolute(entry)) {
    const file = resolve(baseDir, entry);
    return existsSync(file) ? pathToFileURL(file).href : undefined;
  }
  if (FIRST_PARTY.test(entry)) {
    const file = join(packageRoot(), 'dist', firstParty, entry, 'src', 'index.js');
    if (existsSync(file)) return pathToFileURL(file).href;
  }
  // A package name: resolved by Node from this package's node_modules.
  try {
    return import.meta.resolve(entry);
  } catch {
    return undefined;
  }
}
