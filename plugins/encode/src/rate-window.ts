/**
 * Pictures and bytes over the last `windowMs`, for encode_fps and bitrate_kbps. Early on the rate is
 * taken over the time since the first sample, so the first seconds do not read low.
 */
export class RateWindow {
  private readonly samples: { at: number; bytes: number }[] = [];
  private firstAt: number | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  add(bytes: number): void {
    const at = this.now();
    this.firstAt ??= at;
    this.samples.push({ at, bytes });
    this.prune(at);
  }

  /** Forget everything (a new encoder run: its rate starts again). */
  reset(): void {
    this.samples.length = 0;
    this.firstAt = undefined;
  }

  rates(): { fps: number; kbps: number } {
    const now = this.now();
    this.prune(now);
    if (this.firstAt === undefined || this.samples.length === 0) return { fps: 0, kbps: 0 };
    const spanMs = Math.max(Math.min(this.windowMs, now - this.firstAt), 1000);
    const bytes = this.samples.reduce((sum, s) => sum + s.bytes, 0);
    return { fps: round1((this.samples.length * 1000) / spanMs), kbps: round1((bytes * 8) / spanMs) };
  }

  private prune(now: number): void {
    let drop = 0;
    while (drop < this.samples.length && this.samples[drop].at <= now - this.windowMs) drop++;
    if (drop > 0) this.samples.splice(0, drop);
  }
}

function round1(v: number): number {
  return Math.round(v * 10) / 10;
}
