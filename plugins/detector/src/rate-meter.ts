/** The rate actually achieved, over a sliding window of recent event times. */
export class RateMeter {
  private readonly times: number[] = [];

  constructor(private readonly windowMs = 2000) {}

  mark(now: number): void {
    this.times.push(now);
    while (this.times.length > 0 && this.times[0] < now - this.windowMs) this.times.shift();
  }

  /** Events per second; 0 until two events are known. */
  rate(now: number): number {
    while (this.times.length > 0 && this.times[0] < now - this.windowMs) this.times.shift();
    if (this.times.length < 2) return 0;
    const span = (this.times[this.times.length - 1] - this.times[0]) / 1000;
    return span > 0 ? (this.times.length - 1) / span : 0;
  }
}
