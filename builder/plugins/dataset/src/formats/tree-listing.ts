import { LookoutError } from 'lookout/core';
import type { DatasetStorage } from '../storage/dataset-storage.js';

/** The tree's file paths (a set: the readers look up label and thermal twins), bounded in count. */
export async function listTree(storage: DatasetStorage, uri: string, maxFiles: number): Promise<Set<string>> {
  const files = new Set<string>();
  for await (const entry of storage.list(uri)) {
    files.add(entry.path);
    if (files.size > maxFiles) {
      throw new LookoutError('dataset.dataset_too_large', `${uri} has more than ${maxFiles} files; raise LOOKOUT_BUILDER_MAX_DATASET_FILES or split it`, {
        details: { uri, limit: maxFiles },
      });
    }
  }
  return files;
}

/** The twin of `image` under `folder` (same relative path, any image extension), if the tree has one. */
export function twinOf(files: Set<string>, folder: string, relativeToImages: string): string | undefined {
  const stem = relativeToImages.replace(/\.[^./]+$/, '');
  for (const ext of ['.png', '.jpg', '.jpeg', '.PNG', '.JPG', '.JPEG']) {
    const candidate = `${folder}/${stem}${ext}`;
    if (files.has(candidate)) return candidate;
  }
  return undefined;
}

/** Class names from a names file: one per line (classes.txt, obj.names). */
export function parseNamesFile(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}
