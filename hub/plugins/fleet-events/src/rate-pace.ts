/**
 * At most one message a period per key, on average, without dropping a steady stream at that very
 * rate: a device detecting 5 times a second, thinned to 5 a second, keeps every dets. A gate on the
 * time since the last message sent ("200 ms or more") dropped each one that arrived a little early
 * (195 ms after the last one, arrivals jitter) and with it the stream fell to one dets in 400 ms at
 * times, which left a snapshot 200 ms from its nearest boxes. This is the generic cell rate algorithm:
 * each message moves the key's due time on by a period; one may come up to `toleranceMs` before it.
 */
export class RatePace {
  private readonly due = new Map<string, number>();

  constructor(
    private readonly periodMs: number,
    private readonly toleranceMs = periodMs / 2,
  ) {}

  /** True when a message of `key` that came at `atMs` may go (and then it counts). */
  take(key: string, atMs: number): boolean {
    const due = this.due.get(key) ?? -Infinity;
    if (atMs < due - this.toleranceMs) return false;
    this.due.set(key, Math.max(due, atMs) + this.periodMs);
    return true;
  }
}
