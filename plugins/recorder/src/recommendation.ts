import type { EncoderExit } from '../../encode/src/service.js';
import type { StorageState } from './storage.js';

export interface RecommendationInputs {
  isWriting: boolean;
  /** Last picture written (epoch ms), or null before the first. */
  lastWriteAtMs: number | null;
  startedAtMs: number;
  nowMs: number;
  stallMs: number;
  encoderRunning: boolean;
  encoderExit: EncoderExit | null;
  writeError: { at: string; message: string } | null;
  storage: StorageState | null;
  storageError: string | null;
  /** The write queue, when the writer has one: pictures dropped because the disk does not keep up. */
  writeQueue?: { dropping: boolean; dropped_pictures: number; queued_bytes: number } | null;
  /** The automatic prune ran at CRITICAL and left the volume CRITICAL with this many chunks. */
  prunedToChunks?: number | null;
}

/**
 * get_recording_status's advice: what is wrong and what to do, or '' when recording is fine. Several
 * problems are joined with '; ', the most urgent first.
 */
export function recommendation(i: RecommendationInputs): string {
  const out: string[] = [];
  if (!i.isWriting && i.nowMs - i.startedAtMs >= i.stallMs) {
    const since = new Date(i.lastWriteAtMs ?? i.startedAtMs).toISOString();
    const writeFailedLast = i.writeError && (i.lastWriteAtMs === null || Date.parse(i.writeError.at) >= i.lastWriteAtMs);
    if (i.encoderExit && (!i.encoderRunning || i.lastWriteAtMs === null || Date.parse(i.encoderExit.at) >= i.lastWriteAtMs)) {
      out.push(`recording stalled since ${since}: encoder exited with ${i.encoderExit.message}`);
    } else if (i.writeQueue?.dropping) {
      out.push(
        `recording stalled since ${since}: the disk does not take writes (${i.writeQueue.dropped_pictures} pictures dropped, ${i.writeQueue.queued_bytes} bytes waiting)`,
      );
    } else if (writeFailedLast) {
      out.push(`recording stalled since ${since}: chunk writes fail (${i.writeError!.message})`);
    } else if (!i.encoderRunning) {
      out.push(`recording stalled since ${since}: the encoder is not running`);
    } else {
      out.push(`recording stalled since ${since}: no picture from the encoder for ${Math.round((i.nowMs - (i.lastWriteAtMs ?? i.startedAtMs)) / 1000)} s`);
    }
  }
  if (i.storageError) out.push(`storage cannot be measured (${i.storageError}): check the recordings mount`);
  else if (i.storage?.health === 'CRITICAL' && typeof i.prunedToChunks === 'number')
    out.push(
      `storage CRITICAL after pruning to ${i.prunedToChunks} chunks: the recordings are not what fills the disk (${i.storage.used_pct}% used, ${i.storage.free_gb} GB free)`,
    );
  else if (i.storage?.health === 'CRITICAL')
    out.push(`storage CRITICAL: prune or replace the disk (${i.storage.used_pct}% used, ${i.storage.free_gb} GB free)`);
  else if (i.storage?.health === 'WARNING') out.push(`storage WARNING: ${i.storage.used_pct}% used; unjustified chunks are pruned first at CRITICAL`);
  return out.join('; ');
}
