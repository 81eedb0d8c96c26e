/**
 * Events per second over a sliding window (or over the time seen so far while it fills, at least a
 * second, so that the first crop is not a burst rate): crops read per second.
 */
export class RateWindow {
  private readonly at: number[] = [];
  private origin: number | undefined;

  constructor(private readonly windowMs = 10_000) {}

  mark(now: number, count = 1): void {
    this.origin ??= now;
    for (let i = 0; i < count; i++) this.at.push(now);
  }

  rate(now: number): number {
    if (this.origin === undefined) return 0;
    while (this.at.length > 0 && this.at[0] <= now - this.windowMs) this.at.shift();
    const span = Math.max(1000, Math.min(now - this.origin, this.windowMs));
    return this.at.length / (span / 1000);
  }
}
