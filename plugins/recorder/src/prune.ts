import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { files, listChunkFiles } from './chunk-files.js';
import { readSidecar } from './sidecar.js';

export interface PruneEntry {
  name: string;
  justified: boolean;
  size_bytes: number;
}

export interface PruneReport {
  dir: string;
  keep: number;
  dry_run: boolean;
  total_chunks: number;
  kept_chunks: number;
  /** Removed (or, dry, would be removed), in the order they went. */
  removed: PruneEntry[];
  freed_bytes: number;
}

/**
 * Removal order: the oldest unjustified chunk first, justified chunks only once no unjustified one is
 * left, so evidence outlives routine footage. A chunk without a readable sidecar counts as unjustified.
 */
export function removalOrder<T extends { name: string; justified: boolean }>(oldestFirst: readonly T[]): T[] {
  return [...oldestFirst.filter((c) => !c.justified), ...oldestFirst.filter((c) => c.justified)];
}

/** The chunks of a folder with what the prune needs to know, oldest first. */
export async function chunkInventory(dir: string): Promise<PruneEntry[]> {
  const out: PruneEntry[] = [];
  for (const name of await listChunkFiles(dir)) {
    const sidecar = await readSidecar(dir, name);
    let size = sidecar?.size_bytes ?? 0;
    try {
      size = (await stat(join(dir, name))).size;
    } catch {
      continue; // removed meanwhile
    }
    out.push({ name, justified: sidecar?.justified ?? false, size_bytes: size });
  }
  return out;
}

/** Removes a chunk with its sidecar and detection log (the chunk last: a listed chunk always has its sidecar). */
export async function removeChunk(dir: string, name: string): Promise<void> {
  await rm(join(dir, files.detsLog(name)), { force: true });
  await rm(join(dir, name), { force: true });
  await rm(join(dir, files.sidecar(name)), { force: true });
}

/**
 * Keeps exactly `keep` chunks (all when there are fewer), removing in removalOrder; dry, it only
 * reports what would go. The script of spec 02 (KEEP_CHUNKS, DRY_RUN=1), for the recorder and for
 * `lookout prune-recordings`.
 */
export async function pruneRecordings(dir: string, options: { keep: number; dryRun: boolean }): Promise<PruneReport> {
  const inventory = await chunkInventory(dir);
  const excess = Math.max(0, inventory.length - options.keep);
  const victims = removalOrder(inventory).slice(0, excess);
  if (!options.dryRun) for (const v of victims) await removeChunk(dir, v.name);
  return {
    dir,
    keep: options.keep,
    dry_run: options.dryRun,
    total_chunks: inventory.length,
    kept_chunks: inventory.length - victims.length,
    removed: victims,
    freed_bytes: victims.reduce((n, v) => n + v.size_bytes, 0),
  };
}

/**
 * The prune at CRITICAL: first down to `keep`, then one chunk at a time in removalOrder (always
 * keeping the newest) until `stillCritical` says the volume is back below the CRITICAL threshold.
 */
export async function pruneUntilHealthy(dir: string, keep: number, stillCritical: () => Promise<boolean>): Promise<PruneReport> {
  const first = await pruneRecordings(dir, { keep, dryRun: false });
  const removed = [...first.removed];
  if (await stillCritical()) {
    const inventory = await chunkInventory(dir);
    const newest = inventory[inventory.length - 1]?.name;
    for (const c of removalOrder(inventory.filter((e) => e.name !== newest))) {
      await removeChunk(dir, c.name);
      removed.push(c);
      if (!(await stillCritical())) break;
    }
  }
  return {
    ...first,
    kept_chunks: first.total_chunks - removed.length,
    removed,
    freed_bytes: removed.reduce((n, v) => n + v.size_bytes, 0),
  };
}
