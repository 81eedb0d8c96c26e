/**
 * Probe MessageIDs answered recently. Clients send each Probe several times over UDP (node-onvif-ts
 * three times 150 ms apart) and some drop repeated answers, so each distinct probe is answered once.
 * Bounded: past `max` entries the oldest are forgotten first.
 */
export class RecentIds {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly max = 1024,
  ) {}

  /** True the first time `id` is offered within the window (and remembers it); false for a repeat. */
  firstTime(id: string, now: number): boolean {
    this.expire(now);
    if (this.seen.has(id)) return false;
    this.seen.set(id, now + this.windowMs);
    while (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value!);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }

  private expire(now: number): void {
    // Insertion order is expiry order (one window for all), so the first live entry ends the sweep.
    for (const [id, until] of this.seen) {
      if (until > now) break;
      this.seen.delete(id);
    }
  }
}
