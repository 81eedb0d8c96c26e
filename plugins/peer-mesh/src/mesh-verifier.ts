import { decodeDatagram, type DropReason, type MeshMessage } from './datagram.js';
import { ReplayGuard } from './replay-guard.js';

/** The schema's counters (core MeshCountersSchema) plus what the mesh adds: sender floods, a full peer table, failed sends. */
// A type, not an interface: it must fit the schema's open (looseObject) counters type.
export type MeshNodeCounters = {
  sent: number;
  accepted: number;
  dropped_bad_signature: number;
  dropped_stale: number;
  dropped_replayed: number;
  dropped_malformed: number;
  dropped_unknown_sender: number;
  dropped_rate_limited: number;
  peers_refused: number;
  send_errors: number;
};

export function emptyCounters(): MeshNodeCounters {
  return {
    sent: 0,
    accepted: 0,
    dropped_bad_signature: 0,
    dropped_stale: 0,
    dropped_replayed: 0,
    dropped_malformed: 0,
    dropped_unknown_sender: 0,
    dropped_rate_limited: 0,
    peers_refused: 0,
    send_errors: 0,
  };
}

const COUNTER: Record<DropReason, keyof MeshNodeCounters> = {
  bad_signature: 'dropped_bad_signature',
  stale: 'dropped_stale',
  replayed: 'dropped_replayed',
  malformed: 'dropped_malformed',
  unknown_sender: 'dropped_unknown_sender',
};

/**
 * What a received datagram goes through before the mesh believes it: framing and MAC, fields,
 * not from ourselves, fresh, in order. Each drop is counted by its reason; nothing is kept of a
 * dropped datagram.
 */
export class MeshVerifier {
  private readonly guard: ReplayGuard;

  constructor(
    private readonly selfId: string,
    private readonly key: Buffer,
    windowMs: number,
    maxSenders: number,
    readonly counters: MeshNodeCounters = emptyCounters(),
  ) {
    this.guard = new ReplayGuard(windowMs, maxSenders);
  }

  verify(datagram: Buffer, now: number): MeshMessage | null {
    const decoded = decodeDatagram(datagram, this.key);
    if (!decoded.ok) return this.drop(decoded.reason);
    const message = decoded.message;
    if (message.from === this.selfId) return this.drop('unknown_sender');
    const verdict = this.guard.admit(message, now);
    if (verdict !== 'ok') return this.drop(verdict);
    this.counters.accepted += 1;
    return message;
  }

  private drop(reason: DropReason): null {
    this.counters[COUNTER[reason]] += 1;
    return null;
  }
}
