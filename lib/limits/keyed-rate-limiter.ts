/**
 * A token bucket per key (a sender's address, a device and event kind, or one fixed key for a single
 * gate such as replies to garbage): `burst` back to back, then `perSecond`. What a stranger can make
 * us do per key is bounded, and so is the table itself: past `maxKeys` the least recently seen key is
 * forgotten (spoofed sources cannot grow it; a forgotten key starts again with a full bucket, which
 * is no worse than a fresh sender). The one rate limiter of the house: the edge's reply gates and the
 * mesh's per-sender check use it too.
 */
export interface KeyedRateLimits {
  /** Events of one key allowed back to back (0: no limit). */
  burst: number;
  /** Events of one key allowed per second once the burst is spent. */
  perSecond: number;
  /** Keys tracked (default 10 000). */
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
  refused: number;
}

const DEFAULT_MAX_KEYS = 10_000;

export class KeyedRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxKeys: number;
  /** Events refused since start, all keys together. */
  refusedTotal = 0;

  /**
   * `now`: the clock `take` reads when it is given no time (ms). Monotonic by default, so that a
   * wall-clock step back neither holds a key refused nor refills it; tests pass a clock they move.
   */
  constructor(
    private readonly limits: KeyedRateLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.maxKeys = limits.maxKeys ?? DEFAULT_MAX_KEYS;
  }

  /**
   * `false`: over the rate (counted). Else how many of this key were refused since its last allowed
   * one, so that what is kept can say what was left out. `nowMs`: the caller's own clock reading
   * (a monotonic one is best), else the limiter's.
   */
  take(key: string, nowMs: number = this.now()): number | false {
    if (this.limits.burst <= 0) return 0;
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key); // re-inserted below: the Map's order is least recently seen first
      bucket.tokens = Math.min(this.limits.burst, bucket.tokens + (Math.max(0, nowMs - bucket.atMs) / 1000) * this.limits.perSecond);
      bucket.atMs = Math.max(bucket.atMs, nowMs); // a clock stepping back must not refill twice
    } else {
      bucket = { tokens: this.limits.burst, atMs: nowMs, refused: 0 };
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      bucket.refused++;
      this.refusedTotal++;
      return false;
    }
    bucket.tokens -= 1;
    const refused = bucket.refused;
    bucket.refused = 0;
    return refused;
  }

  /** Keys tracked now. */
  get size(): number {
    return this.buckets.size;
  }
}
