/**
 * A device's recorder as the hub knows it: from its chunks (data_manifest) and the chunk count of
 * its health message, never from the health message's overall `status`, which says the device is
 * up and nothing about whether it records. What cannot be known is null with the reason.
 */
export type RecorderStatus = 'recording' | 'stalled' | 'none';

export interface RecorderView {
  /** recording: its newest chunk is recent; stalled: it is old; none: the device holds no chunk; null: unknown (see reason). */
  status: RecorderStatus | null;
  reason: string | null;
  chunk_count: number | null;
  latest_chunk: Record<string, unknown> | null;
  last_health_at: string | null;
}

/** A chunk is about 60 s: one that ended longer ago than three of them means the recorder stopped writing. */
export const RECORDING_GRACE_SEC = 180;

export interface RecorderFacts {
  presence: 'online' | 'offline' | 'stale' | 'unknown';
  /** `storage.chunk_count` of the latest health message, when it has one. */
  chunkCount: number | null;
  /** The newest chunk of the latest data_manifest. */
  latestChunk: Record<string, unknown> | null;
  lastHealthAt: number | null;
  now: number;
}

export function recorderState(f: RecorderFacts): RecorderView {
  const base = {
    chunk_count: f.chunkCount,
    latest_chunk: f.latestChunk,
    last_health_at: f.lastHealthAt === null ? null : new Date(f.lastHealthAt).toISOString(),
  };
  const unknown = (reason: string): RecorderView => ({ status: null, reason, ...base });
  // What a device that is not online last said is history: its recorder may have stopped with it.
  if (f.presence !== 'online') return unknown(`the device is ${f.presence}: its recorder's state now is not known`);
  const endedAt = chunkEnd(f.latestChunk);
  if (endedAt !== null) {
    const ago = Math.max(0, Math.round((f.now - endedAt) / 1000));
    return ago <= RECORDING_GRACE_SEC
      ? { status: 'recording', reason: null, ...base }
      : { status: 'stalled', reason: `its newest chunk ended ${ago} s ago (more than ${RECORDING_GRACE_SEC} s)`, ...base };
  }
  if (f.chunkCount === 0) return { status: 'none', reason: 'the device reports no recording chunk (no recorder, or it has written none)', ...base };
  if (f.chunkCount !== null) return unknown(`the device holds ${f.chunkCount} chunks but sent no data_manifest: when it last recorded is not known`);
  return unknown('no data_manifest and no chunk count in its health message');
}

/** End of a chunk from its start and duration (duration 0 when unknown: the start is then the best bound). */
function chunkEnd(chunk: Record<string, unknown> | null): number | null {
  // The real-time end the recorder stamps: a device that dropped pictures recorded a chunk over more
  // time than its video lasts, so started_at + duration_s would put the end too early.
  const ended = typeof chunk?.ended_at === 'string' ? Date.parse(chunk.ended_at) : NaN;
  if (Number.isFinite(ended)) return ended;
  if (!chunk || typeof chunk.started_at !== 'string') return null;
  const start = Date.parse(chunk.started_at);
  if (!Number.isFinite(start)) return null;
  const duration = typeof chunk.duration_s === 'number' && Number.isFinite(chunk.duration_s) ? chunk.duration_s : 0;
  return start + duration * 1000;
}
