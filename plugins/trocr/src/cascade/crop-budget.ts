/**
 * Crops per second, bounded: a token bucket refilled at TROCR_MAX_CROPS_PER_SEC that holds at most
 * one second's worth (at least one crop), so a quiet spell does not buy a burst that would pile up.
 */
export class CropBudget {
  private tokens: number;
  private last: number | undefined;
  private readonly capacity: number;

  constructor(private readonly perSecond: number) {
    if (!(perSecond > 0)) throw new RangeError(`crops per second must be positive (got ${perSecond})`);
    this.capacity = Math.max(1, perSecond);
    this.tokens = this.capacity;
  }

  /** Takes up to `wanted` whole crops at `now` (ms); returns how many it may read. */
  take(wanted: number, now: number): number {
    if (this.last !== undefined && now > this.last) this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    const granted = Math.max(0, Math.min(wanted, Math.floor(this.tokens)));
    this.tokens -= granted;
    return granted;
  }
}
