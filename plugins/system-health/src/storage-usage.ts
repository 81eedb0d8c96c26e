import { lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { volumeUsage } from 'lookout/lib/storage';

export interface StorageUsage {
  path: string;
  total_gb: number;
  /** Space available to the device (what `df` shows as available). */
  free_gb: number;
  /** Used share of the volume as `df` computes it: used / (used + available). */
  used_pct: number;
  /** Apparent size of the recordings folder (`du --apparent-size`). */
  folder_bytes: number;
  file_count: number;
  /** `.h265` chunks in the folder. */
  chunk_count: number;
  /** True when the walk stopped at its entry limit (the figures are then lower bounds). */
  truncated: boolean;
}

/**
 * The real disk usage of the recordings folder: the volume's figures from statfs and the folder's
 * own size from a bounded walk (a huge folder must not stall the health loop).
 */
export async function measureStorage(path: string, options: { maxEntries?: number } = {}): Promise<StorageUsage> {
  const measured = await folderOrVolume(path);
  const volume = await volumeUsage(measured);
  const walk = measured === path ? await walkFolder(path, options.maxEntries ?? 100_000) : EMPTY_FOLDER;
  return { path, ...volume, ...walk };
}

const EMPTY_FOLDER = { folder_bytes: 0, file_count: 0, chunk_count: 0, truncated: false };

/** Errors of a volume that is full or read-only: the folder cannot be made, the volume can still be measured. */
const VOLUME_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

/**
 * The recordings folder, made when missing. On a full (or read-only) volume even a folder cannot be
 * made: the nearest existing folder above it is measured instead, so health reports the volume's
 * real figures (100 % used, CRITICAL) rather than "cannot measure". Any other failure is thrown.
 */
async function folderOrVolume(path: string): Promise<string> {
  try {
    await mkdir(path, { recursive: true });
    return path;
  } catch (err) {
    // Node's recursive mkdir reports a full volume as ENOENT: one plain mkdir of the first missing
    // level tells the real cause.
    const parent = await nearestFolder(dirname(path));
    const next = join(parent, relative(parent, path).split(sep)[0]);
    try {
      await mkdir(next);
    } catch (cause) {
      if (VOLUME_ERRORS.has((cause as NodeJS.ErrnoException).code ?? '')) return parent;
    }
    throw err;
  }
}

async function nearestFolder(start: string): Promise<string> {
  for (let dir = start; ; dir = dirname(dir)) {
    try {
      if ((await stat(dir)).isDirectory()) return dir;
    } catch {
      // missing too: one level up
    }
    if (dir === dirname(dir)) return dir;
  }
}

async function walkFolder(root: string, maxEntries: number): Promise<Pick<StorageUsage, 'folder_bytes' | 'file_count' | 'chunk_count' | 'truncated'>> {
  let folder_bytes = 0;
  let file_count = 0;
  let chunk_count = 0;
  let seen = 0;
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // removed meanwhile (a prune), or unreadable: counted as empty
    }
    for (const e of entries) {
      if (++seen > maxEntries) return { folder_bytes, file_count, chunk_count, truncated: true };
      const full = join(dir, e.name);
      if (e.isDirectory()) pending.push(full);
      else if (e.isFile()) {
        try {
          folder_bytes += (await lstat(full)).size;
          file_count++;
          if (e.name.endsWith('.h265')) chunk_count++;
        } catch {
          // removed between readdir and lstat
        }
      }
    }
  }
  return { folder_bytes, file_count, chunk_count, truncated: false };
}
