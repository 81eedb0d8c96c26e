import { readFile, rm, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { CHUNK_NAME_PATTERN } from 'lookout/core/contracts';
import { writeFileAtomic } from 'lookout/core';
import { files, listChunkFiles, MANIFEST_FILE } from './chunk-files.js';
import { chunkFilesInRemovalOrder, pruneInventory, type PruneEntry, type PruneReport } from './prune.js';
import { sidecarOf } from './sidecar.js';

/**
 * Where a recordings folder is: this machine's disk, or a device's over SFTP (the operator's session).
 * Paths are POSIX, as on every device.
 */
export interface ChunkStore {
  /** The folder's entries (at least its chunk files) with their sizes; [] when the folder does not exist. */
  list(dir: string): Promise<{ name: string; size: number }[]>;
  /** A file's text, undefined when it does not exist. */
  readText(path: string): Promise<string | undefined>;
  /** Removes a file; one already gone is no error. */
  remove(path: string): Promise<void>;
  writeFileAtomic(path: string, text: string): Promise<void>;
}

export interface ManualPruneReport extends PruneReport {
  manifest_lines_dropped: number;
}

/**
 * The manual prune (spec 02's script, `lookout prune-recordings`): keep exactly `keep` chunks in
 * removalOrder, then drop from the manifest every line whose chunk is no longer there (or that is not
 * a line of ours). The one builder of its report, on the disk here or on a device over SFTP.
 */
export async function pruneStore(store: ChunkStore, dir: string, options: { keep: number; dryRun: boolean }): Promise<ManualPruneReport> {
  const chunks = (await store.list(dir)).filter((e) => CHUNK_NAME_PATTERN.test(e.name)).sort((a, b) => (a.name < b.name ? -1 : 1));
  const inventory: PruneEntry[] = [];
  for (const c of chunks) {
    const sidecar = sidecarOf(c.name, await store.readText(posix.join(dir, files.sidecar(c.name))).catch(() => undefined));
    inventory.push({ name: c.name, justified: sidecar?.justified ?? false, size_bytes: c.size });
  }
  const report = await pruneInventory(dir, inventory, options, async (name) => {
    for (const file of chunkFilesInRemovalOrder(name)) await store.remove(posix.join(dir, file));
  });
  if (options.dryRun) return { ...report, manifest_lines_dropped: 0 };
  const left = new Set(chunks.map((c) => c.name));
  for (const r of report.removed) left.delete(r.name);
  return { ...report, manifest_lines_dropped: await dropFromManifest(store, dir, left) };
}

/** Rewrites the manifest (atomically) without the lines whose chunk is not in `left`; returns how many went. */
async function dropFromManifest(store: ChunkStore, dir: string, left: ReadonlySet<string>): Promise<number> {
  const manifestPath = posix.join(dir, MANIFEST_FILE);
  const manifest = await store.readText(manifestPath);
  if (manifest === undefined) return 0;
  const lines = manifest.split('\n').filter((l) => l.trim());
  const kept = lines.filter((l) => {
    try {
      return left.has(String((JSON.parse(l) as { name?: unknown }).name));
    } catch {
      return false;
    }
  });
  const dropped = lines.length - kept.length;
  if (dropped > 0) await store.writeFileAtomic(manifestPath, kept.length > 0 ? `${kept.join('\n')}\n` : '');
  return dropped;
}

/** This machine's disk as a ChunkStore. */
export const localChunkStore: ChunkStore = {
  async list(dir) {
    const out: { name: string; size: number }[] = [];
    for (const name of await listChunkFiles(dir)) {
      const st = await stat(join(dir, name)).catch(() => undefined); // removed meanwhile
      if (st) out.push({ name, size: st.size });
    }
    return out;
  },
  readText: (path) =>
    readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    }),
  remove: (path) => rm(path, { force: true }),
  writeFileAtomic: (path, text) => writeFileAtomic(path, text),
};
