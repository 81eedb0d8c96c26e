import { type Logger, toLookoutError } from 'lookout/core';
import { ChunkIndex } from './chunk-index.js';
import { readManifest, writeManifest } from './manifest-file.js';
import { recoverRecordings } from './recovery.js';

export interface OpenRecordingsOptions {
  dir: string;
  video: { fps: number; width: number; height: number };
  gates: { person: number; weapon: number };
  manifestEntries: number;
  log: Logger;
}

/**
 * The recordings folder at start: leftovers of an unclean stop repaired, the index read, the manifest
 * rewritten to the chunks that exist. Repair and the rewrite are best effort: on a full disk they fail,
 * and the recorder must still start, say CRITICAL and record again once there is room (only chunks with
 * a sidecar are listed).
 */
export async function openRecordings(o: OpenRecordingsOptions): Promise<ChunkIndex> {
  const { dir, log } = o;
  const before = await readManifest(dir);
  try {
    const recovery = await recoverRecordings({ dir, fps: o.video.fps, width: o.video.width, height: o.video.height, gates: o.gates });
    for (const r of recovery.removed) log.warn({ name: r.name, reason: r.reason }, 'recording leftover removed');
    if (recovery.recovered.length + recovery.sidecarsRebuilt.length > 0) {
      log.info({ recovered: recovery.recovered, sidecars_rebuilt: recovery.sidecarsRebuilt }, 'recordings recovered after an unclean stop');
    }
  } catch (err) {
    log.error({ code: toLookoutError(err).code }, `recovery of ${dir} incomplete: ${(err as Error).message}`);
  }
  const index = new ChunkIndex(dir);
  await index.refresh();
  const dropped = before.filter((s) => !index.get(s.name)).length;
  if (dropped > 0) log.info({ dropped }, 'manifest lines of missing chunks dropped');
  await writeManifest(dir, index.all(), o.manifestEntries).catch((err: Error) => log.warn(`recent_manifest.jsonl not written: ${err.message}`));
  return index;
}
