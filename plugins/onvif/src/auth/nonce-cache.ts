/**
 * UsernameToken nonces seen within the clock-skew window, so that a captured request cannot be
 * played again. Bounded: when full, the oldest entry is forgotten and its Created time becomes a
 * floor below which every token is refused (a forgotten nonce could otherwise be replayed).
 *
 * One allowance: the same token again from the same peer address within `repeatWindowMs` of its first
 * use, a few times. libonvif keeps one nonce for a session and stamps Created in milliseconds, so two of
 * its requests sent in one millisecond carry the very same token; refusing the second broke a real
 * client. A third party replaying a captured token comes from another address (spoofing one takes a
 * TCP handshake, not possible off the path) or too late.
 */
export class NonceCache {
  private readonly seen = new Map<string, Seen>();
  private floorMs = -Infinity;

  constructor(
    private readonly max: number,
    /** How long a nonce is remembered: past that its Created is outside the skew window anyway. */
    private readonly ttlMs: number,
    private readonly repeatWindowMs: number,
    private readonly maxRepeats = 4,
  ) {}

  /** Records the nonce; false when it was already used (or is too old to be told apart from one). */
  use(nonce: string, createdMs: number, nowMs: number, peer = ''): boolean {
    this.expire(nowMs);
    if (createdMs <= this.floorMs) return false;
    const before = this.seen.get(nonce);
    if (before) return this.repeat(before, nowMs, peer);
    if (this.seen.size >= this.max) {
      const [oldest] = this.seen;
      this.seen.delete(oldest[0]);
      this.floorMs = Math.max(this.floorMs, oldest[1].created);
    }
    // Insertion order is expiry order (one ttl for all): expiring walks from the front.
    this.seen.set(nonce, { expiry: nowMs + this.ttlMs, created: createdMs, firstUse: nowMs, peer, repeats: 0 });
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private repeat(entry: Seen, nowMs: number, peer: string): boolean {
    if (this.repeatWindowMs <= 0 || peer === '' || peer !== entry.peer) return false;
    if (nowMs - entry.firstUse > this.repeatWindowMs || entry.repeats >= this.maxRepeats) return false;
    entry.repeats++;
    return true;
  }

  private expire(nowMs: number): void {
    for (const [nonce, entry] of this.seen) {
      if (entry.expiry > nowMs) break;
      this.seen.delete(nonce);
    }
  }
}

interface Seen {
  expiry: number;
  created: number;
  firstUse: number;
  /** The remote address that first used the token ('' when unknown: no repeat allowed). */
  peer: string;
  repeats: number;
}
