/**
 * At most `limit` events per window. `take()` answers false when over the limit, else how many were
 * refused since the last accepted one (so a log line can say what it left out).
 */
export class RateGate {
  private windowStart = 0;
  private count = 0;
  private refused = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(): number | false {
    const t = this.now();
    if (t - this.windowStart >= this.windowMs) {
      this.windowStart = t;
      this.count = 0;
    }
    if (this.count >= this.limit) {
      this.refused++;
      return false;
    }
    this.count++;
    const refused = this.refused;
    this.refused = 0;
    return refused;
  }
}
