import { LookoutError } from 'lookout/core';

/** How long a stopped operation may take to let go of its channel before its caller hears of the stop. */
const SETTLE_MS = 2000;

export interface GuardOptions {
  /** For messages: `cam-1 (127.0.0.1:22): list`. */
  what: string;
  /** Longest silence: the timer restarts whenever the work calls `touch` (data arrived). */
  idleTimeoutMs: number;
  signal?: AbortSignal;
  /** Tears the operation down (closes its channel); called once, on timeout or abort. */
  stop: () => void;
}

/** The error an abort gives: the signal's own reason when it is one of ours, else a cancelled ssh_failed. */
export function abortError(signal: AbortSignal, what: string): LookoutError {
  const reason: unknown = signal.reason;
  if (reason instanceof LookoutError) return reason;
  if (reason instanceof Error && reason.name === 'TimeoutError')
    return new LookoutError('ssh_timeout', `${what}: timed out`, { details: { reason: 'deadline' } });
  return new LookoutError('ssh_failed', `${what}: cancelled`, { details: { reason: 'cancelled' } });
}

/**
 * Runs one SSH operation under an inactivity timeout and the caller's abort signal. On either, the
 * channel is stopped and the caller gets ssh_timeout (or the abort's error) once the work has let go
 * (bounded), so that what the work cleans up (a partial download) is gone when the caller hears.
 */
export function guarded<T>(options: GuardOptions, work: (touch: () => void) => Promise<T>): Promise<T> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(abortError(signal, options.what));
  return new Promise<T>((resolve, reject) => {
    let stopped: LookoutError | undefined;
    let timer: NodeJS.Timeout | undefined;
    let settleTimer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(settleTimer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const stop = (err: LookoutError): void => {
      if (stopped || done) return;
      stopped = err;
      clearTimeout(timer);
      try {
        options.stop();
      } catch {
        // The channel may already be gone; the stop is what matters.
      }
      settleTimer = setTimeout(() => finish(() => reject(err)), SETTLE_MS);
    };
    const touch = (): void => {
      if (stopped || done) return;
      clearTimeout(timer);
      timer = setTimeout(
        () =>
          stop(
            new LookoutError('ssh_timeout', `${options.what}: no answer over SSH for ${options.idleTimeoutMs} ms`, {
              details: { timeout_ms: options.idleTimeoutMs },
            }),
          ),
        options.idleTimeoutMs,
      );
    };
    const onAbort = (): void => stop(abortError(signal!, options.what));
    signal?.addEventListener('abort', onAbort, { once: true });
    touch();
    work(touch).then(
      (value) => finish(() => (stopped ? reject(stopped) : resolve(value))),
      (err: unknown) => finish(() => reject(stopped ?? (err as Error))),
    );
  });
}
