import { posix } from 'node:path';
import { CHUNK_NAME_PATTERN } from 'lookout/core/contracts';
import { chunkFilesInRemovalOrder, files, MANIFEST_FILE, pruneInventory, type PruneEntry, type PruneReport } from 'lookout/plugins/recorder';
import type { DeviceSession } from './device-session.js';

/**
 * The manual prune (plugins/recorder/src/prune.ts: keep exactly `keep`, the oldest unjustified
 * chunks first, justified ones last) on a device over SFTP: the listing, sidecars and removals go
 * through the session; the manifest loses the lines of removed chunks (rewritten atomically).
 */
export async function pruneRemote(
  session: DeviceSession,
  dir: string,
  options: { keep: number; dryRun: boolean },
): Promise<PruneReport & { manifest_lines_dropped: number }> {
  const listing = await session
    .sftpCall<{ filename: string; attrs: { size: number } }[]>(`listing ${dir}`, (sftp, done) => sftp.readdir(dir, (err, list) => done(err, list)))
    .catch((err: { details?: { sftp_code?: unknown } }) => {
      if (err.details?.sftp_code === 2) return [];
      throw err;
    });
  const chunks = listing.filter((e) => CHUNK_NAME_PATTERN.test(e.filename)).sort((a, b) => (a.filename < b.filename ? -1 : 1));
  const inventory: PruneEntry[] = [];
  for (const c of chunks) {
    let justified = false;
    try {
      const sidecar = JSON.parse((await session.readText(posix.join(dir, files.sidecar(c.filename)))) ?? 'null') as {
        name?: unknown;
        justified?: unknown;
      } | null;
      justified = sidecar?.name === c.filename && sidecar.justified === true;
    } catch {
      // An unreadable sidecar counts as unjustified, as in the recorder's own prune.
    }
    inventory.push({ name: c.filename, justified, size_bytes: c.attrs.size });
  }
  const report = await pruneInventory(dir, inventory, options, async (name) => {
    for (const file of chunkFilesInRemovalOrder(name)) await session.remove(posix.join(dir, file));
  });
  let dropped = 0;
  if (!options.dryRun) {
    const manifestPath = posix.join(dir, MANIFEST_FILE);
    const manifest = await session.readText(manifestPath);
    if (manifest !== undefined && report.removed.length > 0) {
      const gone = new Set(report.removed.map((v) => v.name));
      const lines = manifest.split('\n').filter((l) => l.trim());
      const kept = lines.filter((l) => {
        try {
          return !gone.has(String((JSON.parse(l) as { name?: unknown }).name));
        } catch {
          return false;
        }
      });
      dropped = lines.length - kept.length;
      if (dropped > 0) await session.writeFileAtomic(manifestPath, kept.length > 0 ? `${kept.join('\n')}\n` : '');
    }
  }
  return { ...report, manifest_lines_dropped: dropped };
}
