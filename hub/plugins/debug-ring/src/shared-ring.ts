import type { HubSharedState } from 'lookout/hub';
import type { DebugEventInput, DebugRing } from './service.js';

/** The broadcast channel of ring events between hub replicas. */
export const RING_CHANNEL = 'debug-ring';
/**
 * Kinds a replica records for a request it served (a tool call, an SSH fallback, a peer query, a
 * snapshot or clip): the others did not see it. Every other kind comes from the shared ingest,
 * which each replica applies, so each records those itself.
 */
export const REQUEST_KINDS: ReadonlySet<string> = new Set([
  'tool_call',
  'tool_error',
  'ssh',
  'a2a',
  'snapshot_fail',
  'ssh_jpeg_fail',
  'live/warm_ready',
  'transcode',
]);

interface Shared {
  event: DebugEventInput;
  ms: number;
}

/**
 * The ring as hub replicas share it: a record of a request this hub served (REQUEST_KINDS) is
 * recorded here and broadcast, and the other replicas record it with its time; the records the
 * shared ingest derives (presence, storage changes, refused messages) every replica makes itself.
 * Best effort, as the ring is: a replica cut off from the others misses what they recorded meanwhile.
 */
export function sharedRing(ring: DebugRing, shared: HubSharedState): DebugRing {
  shared.onBroadcast(RING_CHANNEL, (value) => {
    const s = value as Partial<Shared> | null;
    if (!s || typeof s.ms !== 'number' || typeof s.event?.kind !== 'string' || typeof s.event.message !== 'string') return;
    ring.record(s.event, s.ms);
  });
  return {
    record(event, atMs) {
      if (atMs !== undefined || !REQUEST_KINDS.has(event.kind)) return ring.record(event, atMs);
      const ms = Date.now();
      ring.record(event, ms);
      shared.broadcast(RING_CHANNEL, { event, ms } satisfies Shared);
    },
    ingest: (deviceId, topic, suffix, ms) => ring.ingest(deviceId, topic, suffix, ms),
    query: (filter) => ring.query(filter),
    kinds: () => ring.kinds(),
    onRecord: (listener) => ring.onRecord(listener),
  };
}
