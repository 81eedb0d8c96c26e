import { macMatches, parseMessage, readFrame, type DropReason, type MeshMessage } from './datagram.js';
import { CertificateCache, type MeshIdentity, type PeerCertificate } from './mesh-identity.js';
import { ReplayGuard } from './replay-guard.js';

/** The schema's counters (core MeshCountersSchema) plus what the mesh adds: sender floods, a full peer table, failed sends. */
// A type, not an interface: it must fit the schema's open (looseObject) counters type.
export type MeshNodeCounters = {
  sent: number;
  accepted: number;
  /** A MAC or device signature that does not hold. */
  dropped_bad_signature: number;
  /** An introduction whose certificate is not the fleet CA's, out of date, or names another device than its sender. */
  dropped_bad_certificate: number;
  dropped_stale: number;
  dropped_replayed: number;
  dropped_malformed: number;
  /** From ourselves, from a device neither the registry nor the bus vouched for, or sealed by one we share no key with yet. */
  dropped_unknown_sender: number;
  /** Signed for another device (`to` is not us): a capture relayed here. */
  dropped_misaddressed: number;
  /** Signed and for us, but from a source outside the mesh networks that is not where the peer already is. */
  dropped_foreign_address: number;
  /** Over the rate of its source address, or introductions of one device past two a heartbeat. */
  dropped_rate_limited: number;
  /** HMACs computed on received datagrams (the work a sender can make us do). */
  macs_computed: number;
  /** Device signatures verified (introductions that passed every cheaper check). */
  signatures_verified: number;
  /** Peer certificates checked against the fleet CA (a new certificate each; repeats come from a cache). */
  certificates_checked: number;
  peers_refused: number;
  /** Peers found by hello and never heard within the down time, taken out of the table. */
  peers_dropped_unheard: number;
  /** Peers found by hello and silent past the drop time, taken out of the table. */
  peers_dropped_silent: number;
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
    dropped_bad_certificate: 0,
    dropped_stale: 0,
    dropped_replayed: 0,
    dropped_malformed: 0,
    dropped_unknown_sender: 0,
    dropped_misaddressed: 0,
    dropped_foreign_address: 0,
    dropped_rate_limited: 0,
    macs_computed: 0,
    signatures_verified: 0,
    certificates_checked: 0,
    peers_refused: 0,
    peers_dropped_unheard: 0,
    peers_dropped_silent: 0,
    hellos_refused_topic_mismatch: 0,
    hellos_refused_address: 0,
    send_errors: 0,
  };
}

const COUNTER: Record<DropReason, keyof MeshNodeCounters> = {
  bad_signature: 'dropped_bad_signature',
  bad_certificate: 'dropped_bad_certificate',
  stale: 'dropped_stale',
  replayed: 'dropped_replayed',
  malformed: 'dropped_malformed',
  unknown_sender: 'dropped_unknown_sender',
  misaddressed: 'dropped_misaddressed',
  foreign_address: 'dropped_foreign_address',
};

/** What the node knows of a sender, asked by the verifier before it computes anything. */
export interface SenderKnowledge {
  /** The pair key shared with this sender; null when none (unknown, or not introduced yet). */
  pairKey(sender: string): Buffer | null;
  /** Whether this sender may introduce itself now from `address`: vouched for (registry or bus hello) and within its introductions a heartbeat. */
  mayIntroduce(sender: string, address: string): 'ok' | 'unknown' | 'over_budget';
  /** Whether `address`, where it came from, may speak for its sender (the node's network rule). */
  sourceAdmitted(message: MeshMessage, address: string): boolean;
}

export type Verified = { kind: 'sealed'; message: MeshMessage } | { kind: 'intro'; message: MeshMessage; certificate: PeerCertificate };

/**
 * What a received datagram goes through before the mesh believes it, cheapest first so that each
 * check guards the dearer ones: framing; not from ourselves; a sender we know (none of the work below
 * is done for a device nobody vouched for); its MAC (the pair key for a sealed frame, the fleet key
 * for an introduction); fields; meant for us; from an acceptable source; fresh and in order; and for an
 * introduction, last, the certificate (fleet CA, CN = sender) and the device's signature. Each drop is
 * counted by its reason; nothing is kept of a dropped datagram (a refused one never moves a sequence).
 */
export class MeshVerifier {
  private readonly guard: ReplayGuard;
  private readonly certificates = new CertificateCache();

  constructor(
    private readonly identity: MeshIdentity,
    private readonly fleetKey: Buffer,
    windowMs: number,
    maxSenders: number,
    readonly counters: MeshNodeCounters = emptyCounters(),
  ) {
    this.guard = new ReplayGuard(windowMs, maxSenders);
  }

  verify(datagram: Buffer, now: number, senders: SenderKnowledge, source: string): Verified | null {
    const frame = readFrame(datagram);
    if (!frame) return this.drop('malformed');
    if (frame.sender === this.identity.deviceId) return this.drop('unknown_sender');
    let key: Buffer;
    if (frame.kind === 'sealed') {
      const pairKey = senders.pairKey(frame.sender);
      if (!pairKey) return this.drop('unknown_sender');
      key = pairKey;
    } else {
      const may = senders.mayIntroduce(frame.sender, source);
      if (may === 'unknown') return this.drop('unknown_sender');
      if (may === 'over_budget') {
        this.counters.dropped_rate_limited += 1;
        return null;
      }
      key = this.fleetKey;
    }
    this.counters.macs_computed += 1;
    if (!macMatches(key, frame.signed, frame.mac)) return this.drop('bad_signature');
    const message = parseMessage(frame.json, frame.sender, frame.kind);
    if (!message) return this.drop('malformed');
    if (message.to !== this.identity.deviceId) return this.drop('misaddressed');
    if (!senders.sourceAdmitted(message, source)) return this.drop('foreign_address');
    const fresh = this.guard.check(message, now);
    if (fresh !== 'ok') return this.drop(fresh);
    let certificate: PeerCertificate | null = null;
    if (frame.kind === 'intro') {
      const checksBefore = this.certificates.checks;
      const checked = this.identity.checkPeerCertificate(frame.certificate, frame.sender, new Date(now), this.certificates);
      this.counters.certificates_checked += this.certificates.checks - checksBefore;
      if (typeof checked === 'string') return this.drop('bad_certificate');
      this.counters.signatures_verified += 1;
      if (!checked.verify(frame.toSign, frame.signature)) return this.drop('bad_signature');
      certificate = checked;
    }
    this.guard.admit(message, now);
    this.counters.accepted += 1;
    return certificate ? { kind: 'intro', message, certificate } : { kind: 'sealed', message };
  }

  private drop(reason: DropReason): null {
    this.counters[COUNTER[reason]] += 1;
    return null;
  }
}
