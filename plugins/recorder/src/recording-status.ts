import type { RecordingStatusResult } from 'lookout/core/contracts';
import { recommendation } from './recommendation.js';
import type { StatusFileParts } from './status-file.js';

/** The status file's parts and what the tool's answer adds. */
export interface RecordingStatusParts extends StatusFileParts {
  startedAtMs: number;
  /** MANIFEST_ENTRIES: what inventory_count is capped at. */
  manifestEntries: number;
  stallMs: number;
}

/** The answer of get_recording_status, from a fresh storage measure. */
export async function recordingStatus(p: RecordingStatusParts): Promise<RecordingStatusResult> {
  const { video, writer, index, activity } = p;
  const s = await p.storage.measure();
  const newest = index.newest();
  const encoderExit = video.lastExit();
  return {
    total_chunks: index.size,
    inventory_count: Math.min(index.size, p.manifestEntries),
    storage_health: s?.health ?? 'CRITICAL',
    storage_free_gb: s?.free_gb ?? 0,
    storage_used_pct: s?.used_pct ?? 100,
    latest_chunk: newest ? { name: newest.name, path: newest.path, started_at: newest.started_at, size_bytes: newest.size_bytes } : null,
    is_writing_data: activity.isWriting(),
    recommendation: recommendation({
      isWriting: activity.isWriting(),
      lastWriteAtMs: writer.lastWriteAtMs,
      startedAtMs: p.startedAtMs,
      nowMs: Date.now(),
      stallMs: p.stallMs,
      encoderRunning: video.running,
      encoderExit,
      writeError: writer.lastError,
      storage: s,
      storageError: p.storage.error,
      writeQueue: writer.writeQueue(),
      prunedToChunks: s?.health === 'CRITICAL' ? p.storage.prunedToChunks : null,
    }),
    recordings_dir: p.dir,
    writing_chunk: writer.inProgress()?.name ?? null,
    justified_chunks: index.all().filter((c) => c.justified).length,
    justified_ok: activity.justifiedOk(),
    dropped_pictures: writer.picturesDropped,
    write_queue: writer.writeQueue(),
    encoder: { running: video.running, ...video.stats(), last_exit: encoderExit },
    last_error: activity.lastError(),
  };
}
