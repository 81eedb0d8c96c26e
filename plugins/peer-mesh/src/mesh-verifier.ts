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
  /** Signed for another device (`to` is not us): a capture relayed here. */
  dropped_misaddressed: number;
  /** Signed and for us, but from a source outside the mesh networks that is not where the peer already is. */
  dropped_foreign_address: number;
  dropped_rate_limited: number;
  peers_refused: number;
  /** Peers found by hello and never heard within the down time, taken out of the table. */
  peers_dropped_unheard: number;
  /** Hellos on devices/<id>/hello whose device_id is not <id>. */
  hellos_refused_topic_mismatch: number;
  /** Hellos announcing no unicast address inside the mesh networks. */
  hellos_refused_address: number;
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
    dropped_misaddressed: 0,
    dropped_foreign_address: 0,
    dropped_rate_limited: 0,
    peers_refused: 0,
    peers_dropped_unheard: 0,
    hellos_refused_topic_mismatch: 0,
    hellos_refused_address: 0,
    send_errors: 0,
  };
}

const COUNTER: Record<DropReason, keyof MeshNodeCounters> = {
  bad_signature: 'dropped_bad_signature',
  stale: 'dropped_stale',
  replayed: 'dropped_replayed',
  malformed: 'dropped_malformed',
  unknown_sender: 'dropped_unknown_sender',
  misaddressed: 'dropped_misaddressed',
  foreign_address: 'dropped_foreign_address',
};

/**
 * What a received datagram goes through before the mesh believes it: framing and MAC, fields,
 * not from ourselves, meant for us, from an acceptable source, fresh, in order. Each drop is
 * counted by its reason; nothing is kept of a dropped datagram (a refused one never moves a sequence).
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

  /** `sourceAdmitted`: whether the address it came from may speak for its sender (the node's network rule). */
  verify(datagram: Buffer, now: number, sourceAdmitted?: (message: MeshMessage) => boolean): MeshMessage | null {
    const decoded = decodeDatagram(datagram, this.key);
    if (!decoded.ok) return this.drop(decoded.reason);
    const message = decoded.message;
    if (message.from === this.selfId) return this.drop('unknown_sender');
    if (message.to !== this.selfId) return this.drop('misaddressed');
    if (sourceAdmitted && !sourceAdmitted(message)) return this.drop('foreign_address');
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
