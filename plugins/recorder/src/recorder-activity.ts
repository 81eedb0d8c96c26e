import type { EncodedVideo } from '../../encode/src/service.js';
import type { ChunkWriter } from './chunk-writer.js';
import type { StorageWatch } from './storage-watch.js';

export interface RecorderActivityOptions {
  writer: ChunkWriter;
  video: EncodedVideo;
  storage: StorageWatch;
  /** A detector's results reach the recorder. */
  hasDetector: boolean;
  stallMs: number;
  chunkSeconds: number;
}

/** Whether the recorder works, as the status file and the status tool both tell it. */
export class RecorderActivity {
  lastDetectionAtMs: number | null = null;
  /** Set at stop: the status file written then says not writing. */
  stopping = false;

  constructor(private readonly o: RecorderActivityOptions) {}

  /** A picture was written within RECORDING_STALL_MS. */
  isWriting(): boolean {
    const last = this.o.writer.lastWriteAtMs;
    return last !== null && Date.now() - last < this.o.stallMs;
  }

  /** Detections arrived lately: an unjustified chunk means "nothing seen", not "nobody looked". */
  justifiedOk(): boolean {
    return this.o.hasDetector && this.lastDetectionAtMs !== null && Date.now() - this.lastDetectionAtMs < Math.max(this.o.stallMs, this.o.chunkSeconds * 2000);
  }

  /** The newest of the writer's, the encoder's and the storage measure's failures. */
  lastError(): { at: string; message: string } | null {
    const storageError = this.o.storage.error;
    const errors = [this.o.writer.lastError, this.o.video.lastExit(), storageError ? { at: new Date().toISOString(), message: storageError } : null];
    return errors.filter((e) => e !== null).sort((a, b) => Date.parse(b.at) - Date.parse(a.at))[0] ?? null;
  }
}
