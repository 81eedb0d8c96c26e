import { join } from 'node:path';
import { writeFileAtomic } from 'lookout/core';
import { STATUS_FILE } from './chunk-files.js';
import type { WriteQueueState } from './chunk-writer.js';
import type { StorageState } from './storage.js';

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
