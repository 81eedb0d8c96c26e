import type { DebugRing } from '../../debug-ring/src/service.js';

/** A device's recorder as the media plugin last learned it. */
export interface RecorderFacts {
  is_writing_data: boolean | null;
  storage_health: string | null;
  total_chunks: number | null;
  /** Who said so: device (get_recording_status), ssh_sftp / ssh_listing (a discovery), data_manifest. */
  source: string;
  recommendation?: string;
}

const MAX_DEVICES = 10_000;
/** A chunk is about 60 s: one that ended longer ago than three of them means the recorder stopped. */
const WRITING_GRACE_MS = 180_000;

/**
 * Records `recorder_status` in the debug ring when a device's recorder is first learned and when
 * it starts or stops writing or its storage health changes (not on every answer: an inventory of
 * the fleet every minute must not fill the ring with the same news).
 */
export class RecorderWatch {
  private readonly known = new Map<string, RecorderFacts>();

  constructor(private readonly ring: DebugRing) {}

  learn(deviceId: string, facts: RecorderFacts): void {
    const before = this.known.get(deviceId);
    if (!before && this.known.size >= MAX_DEVICES) this.known.delete(this.known.keys().next().value!);
    this.known.set(deviceId, facts);
    if (before && before.is_writing_data === facts.is_writing_data && before.storage_health === facts.storage_health) return;
    const writing = facts.is_writing_data === null ? 'unknown' : facts.is_writing_data ? 'writing' : 'not writing';
    const message = before
      ? `recorder ${describe(before)} → ${writing}, storage ${facts.storage_health ?? 'unknown'} (${facts.source})`
      : `recorder ${writing}, storage ${facts.storage_health ?? 'unknown'}, ${facts.total_chunks ?? '?'} chunks (${facts.source})`;
    this.ring.record({ kind: 'recorder_status', device_id: deviceId, message, details: { ...facts, previous: before ?? null } });
  }

  /**
   * A data_manifest: the recorder writes when its newest chunk ended within three chunk lengths
   * (as /fleet/health judges); storage is what was learned before (a manifest does not say).
   */
  fromManifest(deviceId: string, message: Record<string, unknown>, now: number): void {
    const chunks = Array.isArray(message.chunks) ? (message.chunks as Record<string, unknown>[]) : [];
    let newestEnd = NaN;
    for (const c of chunks) {
      const start = typeof c.started_at === 'string' ? Date.parse(c.started_at) : NaN;
      const end = typeof c.ended_at === 'string' ? Date.parse(c.ended_at) : start + (typeof c.duration_s === 'number' ? c.duration_s * 1000 : 0);
      if (Number.isFinite(end) && !(end <= newestEnd)) newestEnd = end;
    }
    const writing = Number.isFinite(newestEnd) ? now - newestEnd <= WRITING_GRACE_MS : chunks.length === 0 ? false : null;
    this.learn(deviceId, {
      is_writing_data: writing,
      storage_health: this.known.get(deviceId)?.storage_health ?? null,
      total_chunks: chunks.length,
      source: 'data_manifest',
    });
  }

  get(deviceId: string): RecorderFacts | undefined {
    return this.known.get(deviceId);
  }
}

function describe(f: RecorderFacts): string {
  const writing = f.is_writing_data === null ? 'unknown' : f.is_writing_data ? 'writing' : 'not writing';
  return `${writing}, storage ${f.storage_health ?? 'unknown'}`;
}
