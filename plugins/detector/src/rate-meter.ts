/**
 * Rates actually achieved, over a sliding window, never assumed from a configured stride: what the
 * telemetry reports as `fps` (detection), `camera_fps` and `skipped_fps` (as Frigate reports camera,
 * detection and skipped fps).
 */

/**
 * Frames that started, each owning its period (the time until the next may start). Counting to
 * the end of the current period rather than to `now` keeps the first frames honest: one frame done
 * 20 ms into a 100 ms period is a 10 Hz start, not 50 Hz; a frame that overruns its period owns the
 * time it really took. While the first window fills, the rate is over the time seen so far.
 */
export class RateMeter {
  private readonly starts: number[] = [];
  private origin: number | undefined;
  private periodEnd = -Infinity;

  constructor(private readonly windowMs = 2000) {}

  /** Forgets every frame: after a pause (a thermal suspension) the window fills from scratch. */
  reset(): void {
    this.starts.length = 0;
    this.origin = undefined;
    this.periodEnd = -Infinity;
  }

  /** A frame started at `at`; the next may start `periodMs` later. */
  mark(at: number, periodMs = 0): void {
    this.origin ??= at;
    this.starts.push(at);
    this.periodEnd = Math.max(this.periodEnd, at + periodMs);
  }

  /** Frames per second over the window (or the time seen so far); 0 before the first frame. */
  rate(now: number): number {
    if (this.origin === undefined) return 0;
    const end = Math.max(now, this.periodEnd);
    while (this.starts.length > 0 && this.starts[0] < end - this.windowMs) this.starts.shift();
    const spanMs = Math.min(end - this.origin, this.windowMs);
    return spanMs > 0 ? this.starts.length / (spanMs / 1000) : 0;
  }
}

/**
 * The rate of a counter that only rises (a camera's frame index), from samples of it: how many
 * frames the camera delivered per second, whether or not anyone looked at each one. Unknown (null)
 * until two samples some time apart.
 */
export class CounterRate {
  private readonly samples: { count: number; at: number }[] = [];

  constructor(private readonly windowMs = 2000) {}

  sample(count: number, at: number): void {
    const last = this.samples.at(-1);
    // A counter that went back (a restarted source) starts a new series.
    if (last && (count < last.count || at < last.at)) this.samples.length = 0;
    this.samples.push({ count, at });
    // The oldest sample inside the window is the baseline; one just before it keeps the span whole.
    while (this.samples.length > 2 && this.samples[1].at <= at - this.windowMs) this.samples.shift();
  }

  rate(): number | null {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || last.at <= first.at) return null;
    return (last.count - first.count) / ((last.at - first.at) / 1000);
  }
}
