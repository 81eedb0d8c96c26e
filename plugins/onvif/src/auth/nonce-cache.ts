/**
 * UsernameToken nonces seen within the clock-skew window, so that a captured request cannot be
 * played again. Bounded: when full, the oldest entry is forgotten and its Created time becomes a
 * floor below which every token is refused (a forgotten nonce could otherwise be replayed).
 */
export class NonceCache {
  private readonly seen = new Map<string, { expiry: number; created: number }>();
  private floorMs = -Infinity;

  constructor(
    private readonly max: number,
    /** How long a nonce is remembered: past that its Created is outside the skew window anyway. */
    private readonly ttlMs: number,
  ) {}

  /** Records the nonce; false when it was already used (or is too old to be told apart from one). */
  use(nonce: string, createdMs: number, nowMs: number): boolean {
    this.expire(nowMs);
    if (createdMs <= this.floorMs) return false;
    if (this.seen.has(nonce)) return false;
    if (this.seen.size >= this.max) {
      const [oldest] = this.seen;
      this.seen.delete(oldest[0]);
      this.floorMs = Math.max(this.floorMs, oldest[1].created);
    }
    // Insertion order is expiry order (one ttl for all): expiring walks from the front.
    this.seen.set(nonce, { expiry: nowMs + this.ttlMs, created: createdMs });
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private expire(nowMs: number): void {
    for (const [nonce, entry] of this.seen) {
      if (entry.expiry > nowMs) break;
      this.seen.delete(nonce);
    }
  }
}
