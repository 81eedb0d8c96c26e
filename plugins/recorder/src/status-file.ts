import { join } from 'node:path';
import { toLookoutError, writeFileAtomic, type Logger } from 'lookout/core';
import type { SerialQueue } from 'lookout/lib/limits';
import type { EncodedVideo } from '../../encode/src/service.js';
import { STATUS_FILE } from './chunk-files.js';
import type { ChunkIndex } from './chunk-index.js';
import type { ChunkWriter, WriteQueueState } from './chunk-writer.js';
import type { RecorderActivity } from './recorder-activity.js';
import type { StorageState } from './storage.js';
import type { StorageWatch } from './storage-watch.js';

/** `<recordings>/.h265_status` (spec 01: version, storage, encode statistics, justified_ok). */
export interface RecorderStatusFile {
  version: 1;
  updated_at: string;
  recordings_dir: string;
  storage: (StorageState & { error?: string }) | null;
  encode: {
    codec: 'hevc';
    width: number;
    height: number;
    fps: number;
    gop: number;
    running: boolean;
    frames: number;
    dropped: number;
    bitrate_kbps: number;
    encode_fps: number;
    last_exit: { at: string; message: string } | null;
  };
  /** Pictures waiting for the disk, and those dropped because too many were (RECORDER_MAX_QUEUED_BYTES). */
  write_queue: WriteQueueState;
  /** The last automatic prune left the volume CRITICAL with this many chunks (null otherwise). */
  pruned_to_chunks_still_critical: number | null;
  /** A picture was written within RECORDING_STALL_MS. */
  is_writing: boolean;
  last_write_at: string | null;
  /** The chunk being written (`.part` until complete). */
  writing_chunk: string | null;
  total_chunks: number;
  latest_chunk: string | null;
  justified_chunks: number;
  /**
   * Justification works: a detector is running and its results reach the recorder, so an
   * unjustified chunk means "nothing seen", not "nobody looked".
   */
  justified_ok: boolean;
  /** The last failure of the recorder (a write, the encoder), or null. */
  last_error: { at: string; message: string } | null;
}

export async function writeStatusFile(dir: string, status: RecorderStatusFile): Promise<void> {
  await writeFileAtomic(join(dir, STATUS_FILE), `${JSON.stringify(status)}\n`);
}

/** What the status file is made of. */
export interface StatusFileParts {
  dir: string;
  video: EncodedVideo;
  writer: ChunkWriter;
  index: ChunkIndex;
  storage: StorageWatch;
  activity: RecorderActivity;
}

export function recorderStatusFile(p: StatusFileParts): RecorderStatusFile {
  const { video, writer, index, storage, activity } = p;
  const stats = video.stats();
  return {
    version: 1,
    updated_at: new Date().toISOString(),
    recordings_dir: p.dir,
    storage: storage.state ?? (storage.error ? { health: 'CRITICAL', free_gb: 0, total_gb: 0, used_pct: 100, error: storage.error } : null),
    encode: {
      codec: video.codec,
      width: video.width,
      height: video.height,
      fps: video.fps,
      gop: video.gop,
      running: video.running,
      frames: stats.frames,
      dropped: stats.dropped,
      bitrate_kbps: stats.bitrate_kbps,
      encode_fps: stats.encode_fps,
      last_exit: video.lastExit(),
    },
    write_queue: writer.writeQueue(),
    pruned_to_chunks_still_critical: storage.prunedToChunks,
    is_writing: !activity.stopping && activity.isWriting(),
    last_write_at: writer.lastWriteAtMs === null ? null : new Date(writer.lastWriteAtMs).toISOString(),
    writing_chunk: writer.inProgress()?.name ?? null,
    total_chunks: index.size,
    latest_chunk: index.newest()?.name ?? null,
    justified_chunks: index.all().filter((c) => c.justified).length,
    justified_ok: activity.justifiedOk(),
    last_error: activity.lastError(),
  };
}

/** Writes the status file in the housekeeping queue (after the disk work queued before); a failure is logged, never thrown. */
export function statusFileWriter(p: StatusFileParts, housekeeping: SerialQueue, log: Logger): () => Promise<void> {
  return () =>
    housekeeping.run(async () => {
      try {
        await writeStatusFile(p.dir, recorderStatusFile(p));
      } catch (err) {
        log.warn({ code: toLookoutError(err).code }, `.h265_status not written: ${(err as Error).message}`);
      }
    });
}
