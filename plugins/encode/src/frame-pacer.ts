/**
 * Calls `tick` every 1000/fps ms against a fixed schedule (no drift from timer lateness). When the
 * process falls behind by whole periods, those ticks are skipped and reported through `missed`: a
 * camera that ran on without us produced those frames, and nobody encoded them.
 */
export class FramePacer {
  private timer: NodeJS.Timeout | undefined;
  private nextAt = 0;
  private periodMs = 0;

  constructor(
    private readonly tick: () => void,
    private readonly missed: (count: number) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  start(fps: number): void {
    this.stop();
    this.periodMs = 1000 / fps;
    this.nextAt = this.now();
    this.arm();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  private arm(): void {
    const late = this.now() - this.nextAt;
    if (late >= this.periodMs) {
      const skipped = Math.floor(late / this.periodMs);
      this.nextAt += skipped * this.periodMs;
      this.missed(skipped);
    }
    this.timer = setTimeout(() => this.fire(), Math.max(0, this.nextAt - this.now()));
  }

  private fire(): void {
    this.nextAt += this.periodMs;
    this.arm();
    this.tick();
  }
}
