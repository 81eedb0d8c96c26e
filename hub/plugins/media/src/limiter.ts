export interface LimiterOptions {
  /** Tasks that may wait at once; one more is refused with `busy()` (default: no bound). */
  maxQueued?: number;
  /** The error a call past `maxQueued` rejects with. */
  busy?: (active: number, queued: number) => Error;
}

/**
 * At most `max` tasks at once; the rest wait in arrival order. Transcodes and discovery calls use
 * it so that a burst of requests (a page of clips, a whole fleet) cannot start more ffmpeg
 * processes or SSH sessions than the hub can run.
 *
 * A finishing task hands its slot to the first waiter (the count never drops in between), so a
 * call arriving while that waiter resumes waits too: never more than `max` run. A waiter whose
 * signal aborts leaves the queue; a call past `maxQueued` is refused at once.
 */
export class Limiter {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly max: number,
    private readonly options: LimiterOptions = {},
  ) {}

  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw abortReason(signal);
    if (this.running < this.max) this.running++;
    else await this.wait(signal); // resumed with the slot of the task that finished
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  get active(): number {
    return this.running;
  }

  get queued(): number {
    return this.waiting.length;
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    const { maxQueued, busy } = this.options;
    if (maxQueued !== undefined && this.waiting.length >= maxQueued) {
      return Promise.reject(busy?.(this.running, this.waiting.length) ?? new Error(`${this.running} running and ${this.waiting.length} waiting`));
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(resume);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(abortReason(signal!));
      };
      const resume = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.waiting.push(resume);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(typeof reason === 'string' ? reason : 'aborted');
}
