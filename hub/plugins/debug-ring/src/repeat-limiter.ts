/**
 * Per device and kind, a token bucket over the ring's failure lane: a burst of one device's
 * `device_busy` answers (18 455 in one attack) pushed every other device's failures out of the ring.
 * Past the burst, events of that device and kind are counted instead of kept, and the next one kept
 * says how many were left out before it (as syslog's "last message repeated N times" does).
 */
export interface RepeatLimits {
  /** Events of one device and kind kept back to back (0: no limit). */
  burst: number;
  /** Events of one device and kind kept per second after the burst. */
  perSecond: number;
  /** Device-and-kind pairs tracked; the least recently seen is forgotten past it. */
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
  suppressed: number;
}

const DEFAULT_MAX_KEYS = 10_000;

export class RepeatLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxKeys: number;
  /** Events left out since start, all keys together. */
  suppressedTotal = 0;

  constructor(private readonly limits: RepeatLimits) {
    this.maxKeys = limits.maxKeys ?? DEFAULT_MAX_KEYS;
  }

  /**
   * `undefined`: leave this event out (counted). A number: keep it; how many of its device and kind
   * were left out just before it.
   */
  admit(deviceId: string | undefined, kind: string, nowMs: number): number | undefined {
    if (this.limits.burst <= 0) return 0;
    const key = `${kind}\u0000${deviceId ?? ''}`;
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key); // re-inserted below: the Map's order is least recently seen first
      bucket.tokens = Math.min(this.limits.burst, bucket.tokens + (Math.max(0, nowMs - bucket.atMs) / 1000) * this.limits.perSecond);
      bucket.atMs = nowMs;
    } else {
      bucket = { tokens: this.limits.burst, atMs: nowMs, suppressed: 0 };
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      bucket.suppressed++;
      this.suppressedTotal++;
      return undefined;
    }
    bucket.tokens -= 1;
    const before = bucket.suppressed;
    bucket.suppressed = 0;
    return before;
  }
}
