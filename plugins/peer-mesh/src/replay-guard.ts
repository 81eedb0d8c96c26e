import type { MeshMessage } from './datagram.js';

/** Boots remembered per sender: a restart within the window must not reopen the previous boot's sequence to replays. */
const BOOTS_PER_SENDER = 4;

/**
 * Freshness and order of signed datagrams: the timestamp within ±window of our clock, and per
 * (sender, boot) a sequence number above the last one accepted. A new boot starts its own sequence.
 * Bounded: `maxSenders` senders (least recently heard forgotten first), a few boots each.
 */
export class ReplayGuard {
  /** sender → boot → last accepted seq; both maps kept in least-recently-heard order. */
  private readonly senders = new Map<string, Map<string, number>>();

  constructor(
    private readonly windowMs: number,
    private readonly maxSenders: number,
  ) {}

  /** 'ok' records the datagram as accepted; 'stale' and 'replayed' record nothing. */
  admit(message: Pick<MeshMessage, 'from' | 'boot' | 'seq' | 'ts'>, now: number): 'ok' | 'stale' | 'replayed' {
    const verdict = this.check(message, now);
    if (verdict === 'ok') this.record(message.from, message.boot, message.seq, this.senders.get(message.from));
    return verdict;
  }

  /** The verdict `admit` would give, recording nothing: checked before a signature is verified, so a stale or replayed one costs none. */
  check(message: Pick<MeshMessage, 'from' | 'boot' | 'seq' | 'ts'>, now: number): 'ok' | 'stale' | 'replayed' {
    if (Math.abs(now - message.ts) > this.windowMs) return 'stale';
    const last = this.senders.get(message.from)?.get(message.boot);
    return last !== undefined && message.seq <= last ? 'replayed' : 'ok';
  }

  get size(): number {
    return this.senders.size;
  }

  private record(from: string, boot: string, seq: number, known: Map<string, number> | undefined): void {
    const boots = known ?? new Map<string, number>();
    this.senders.delete(from);
    this.senders.set(from, boots);
    boots.delete(boot);
    boots.set(boot, seq);
    while (boots.size > BOOTS_PER_SENDER) boots.delete(boots.keys().next().value!);
    while (this.senders.size > this.maxSenders) this.senders.delete(this.senders.keys().next().value!);
  }
}
