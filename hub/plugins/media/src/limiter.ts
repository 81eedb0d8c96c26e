/**
 * At most `max` tasks at once; the rest wait in arrival order. Transcodes and discovery calls use
 * it so that a burst of requests (a page of clips, a whole fleet) cannot start more ffmpeg
 * processes or SSH sessions than the hub can run.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }
}

/** Maps `items` through `fn` with at most `max` in flight; results keep the order of `items`. */
export async function mapBounded<T, R>(items: readonly T[], max: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const limiter = new Limiter(max);
  return Promise.all(items.map((item) => limiter.run(() => fn(item))));
}
