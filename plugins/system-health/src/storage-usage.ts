import { lstat, mkdir, readdir, statfs } from 'node:fs/promises';
import { join } from 'node:path';

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

const GB = 1024 ** 3;

/**
 * The real disk usage of the recordings folder: the volume's figures from statfs and the folder's
 * own size from a bounded walk (a huge folder must not stall the health loop).
 */
export async function measureStorage(path: string, options: { maxEntries?: number } = {}): Promise<StorageUsage> {
  await mkdir(path, { recursive: true });
  const fs = await statfs(path);
  const used = (fs.blocks - fs.bfree) * fs.bsize;
  const available = fs.bavail * fs.bsize;
  const walk = await walkFolder(path, options.maxEntries ?? 100_000);
  return {
    path,
    total_gb: round((fs.blocks * fs.bsize) / GB, 3),
    free_gb: round(available / GB, 3),
    used_pct: used + available > 0 ? round((used / (used + available)) * 100, 2) : 0,
    ...walk,
  };
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

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
