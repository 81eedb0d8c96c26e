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

/**
 * The files of a chunk in the order they are removed: its detection log, the chunk, its sidecar last
 * (a listed chunk always has its sidecar). The local prune and the one over SFTP both follow it.
 */
export function chunkFilesInRemovalOrder(name: string): string[] {
  return [files.detsLog(name), name, files.sidecar(name)];
}

/** Removes a chunk with its sidecar and detection log. */
export async function removeChunk(dir: string, name: string): Promise<void> {
  for (const file of chunkFilesInRemovalOrder(name)) await rm(join(dir, file), { force: true });
}

/**
 * Keeps exactly `keep` chunks (all when there are fewer), removing in removalOrder; dry, it only
 * reports what would go. The script of spec 02 (KEEP_CHUNKS, DRY_RUN=1), for the recorder and for
 * `lookout prune-recordings`.
 */
export async function pruneRecordings(dir: string, options: { keep: number; dryRun: boolean }): Promise<PruneReport> {
  return pruneInventory(dir, await chunkInventory(dir), options, (name) => removeChunk(dir, name));
}

/**
 * The manual prune over an inventory, wherever the folder is (here, or on a device over SFTP): the
 * chunks beyond `keep` in removalOrder go through `remove` (unless dry) and the report says which.
 * The one home of the prune's report, so the local and the remote prune cannot tell it differently.
 */
export async function pruneInventory(
  dir: string,
  inventory: readonly PruneEntry[],
  options: { keep: number; dryRun: boolean },
  remove: (name: string) => Promise<void>,
): Promise<PruneReport> {
  const excess = Math.max(0, inventory.length - options.keep);
  const victims = removalOrder(inventory).slice(0, excess);
  if (!options.dryRun) for (const v of victims) await remove(v.name);
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

/** What the prune at CRITICAL measures after each removal. */
export interface VolumeProbe {
  critical: boolean;
  /** Bytes available on the volume (statfs bavail × bsize). */
  freeBytes: number;
}

export interface HealthyPruneReport extends PruneReport {
  /** Still CRITICAL when the prune stopped: what fills the disk is not the recordings. */
  still_critical: boolean;
  /** Why the prune below `keep` stopped (null when it did not go below `keep`). */
  stopped_because: 'healthy' | 'nothing_freed' | 'only_justified_or_newest_left' | null;
}

/** Chunks the prune at CRITICAL never removes below `keep`: the newest ones (the latest evidence). */
export const NEWEST_KEPT_BELOW_KEEP = 2;

/**
 * The automatic prune at CRITICAL. First down to `keep` in removalOrder (unjustified oldest first,
 * justified last), exactly as the manual prune. Below `keep` it removes only unjustified chunks, oldest
 * first and never the newest two, one at a time, and stops as soon as the volume leaves CRITICAL or a
 * removal frees no measurable space: when something else fills the disk, the evidence stays and the
 * report says the volume is still CRITICAL.
 */
export async function pruneUntilHealthy(dir: string, keep: number, probe: () => Promise<VolumeProbe>): Promise<HealthyPruneReport> {
  const first = await pruneRecordings(dir, { keep, dryRun: false });
  const removed = [...first.removed];
  let state = await probe();
  let stopped: HealthyPruneReport['stopped_because'] = null;
  if (state.critical) {
    const inventory = await chunkInventory(dir);
    const newest = new Set(inventory.slice(-NEWEST_KEPT_BELOW_KEEP).map((e) => e.name));
    stopped = 'only_justified_or_newest_left';
    for (const c of inventory.filter((e) => !e.justified && !newest.has(e.name))) {
      await removeChunk(dir, c.name);
      removed.push(c);
      const before = state.freeBytes;
      state = await probe();
      if (!state.critical) {
        stopped = 'healthy';
        break;
      }
      if (state.freeBytes <= before) {
        stopped = 'nothing_freed';
        break;
      }
    }
  }
  return {
    ...first,
    kept_chunks: first.total_chunks - removed.length,
    removed,
    freed_bytes: removed.reduce((n, v) => n + v.size_bytes, 0),
    still_critical: state.critical,
    stopped_because: stopped,
  };
}
