/** Gives back a slot taken with AdmissionQueue.admit; calling it twice gives back one slot. */
export type ReleaseSlot = () => void;

export interface AdmissionLimits {
  /** Tasks that may run at once. */
  concurrency: number;
  /** Tasks that may wait for a slot; past that, admit refuses at once (Infinity: no bound). */
  maxWaiting: number;
}

/** The error `run` rejects with when the line is full, from what runs and waits at that moment. */
export type BusyError = (active: number, waiting: number) => Error;

interface Waiter {
  grant: (release: ReleaseSlot) => void;
}

/**
 * A bounded queue in front of work that must not pile up (tool calls on one device): at most
 * `concurrency` run, at most `maxWaiting` wait, and anything past that is refused immediately so the
 * caller can answer "busy" instead of holding memory and sockets for work that would time out.
 */
export class AdmissionQueue {
  private running = 0;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly limits: AdmissionLimits) {
    if (!(limits.concurrency >= 1) || !(limits.maxWaiting >= 0)) throw new RangeError(`invalid admission limits ${JSON.stringify(limits)}`);
  }

  get active(): number {
    return this.running;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** True when nothing runs or waits (the queue may be forgotten). */
  get idle(): boolean {
    return this.running === 0 && this.waiters.length === 0;
  }

  /**
   * A slot: resolves with its release once the task may run; undefined when the queue is full. An
   * abort while waiting rejects with the signal's reason and frees the place in the line.
   */
  admit(signal?: AbortSignal): Promise<ReleaseSlot> | undefined {
    if (this.running < this.limits.concurrency && this.waiters.length === 0) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiters.length >= this.limits.maxWaiting) return undefined;
    return new Promise<ReleaseSlot>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal!.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /**
   * Runs `task` in a slot and gives the slot back however the task ends. A full line rejects at
   * once with `busy(active, waiting)`; an aborted signal (before or while waiting) rejects with its
   * reason and the task never runs.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal, busy?: BusyError): Promise<T> {
    if (signal?.aborted) throw abortReason(signal);
    const slot = this.admit(signal);
    if (!slot) throw busy?.(this.running, this.waiters.length) ?? new Error(`${this.running} running and ${this.waiters.length} waiting`);
    const release = await slot.catch(() => {
      throw abortReason(signal!);
    });
    try {
      return await task();
    } finally {
      release();
    }
  }

  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter, so a newcomer cannot overtake the line.
      if (next) next.grant(this.releaser());
      else this.running--;
    };
  }
}

/** The signal's reason as an Error (a string reason becomes its message). */
function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(typeof reason === 'string' ? reason : 'aborted');
}
