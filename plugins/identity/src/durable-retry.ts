import type { PluginClock } from 'lookout/core';

export interface DurableRetry {
  /** Stops retrying (the plugin stops; its clock clears the timer anyway). */
  cancel(): void;
}

/**
 * Retries a save on the plugin's clock until it succeeds: what could not be written at start (a full
 * disk) is written once space returns. One attempt at a time, the next `everyMs` after the previous
 * one ended, so a slow disk never stacks attempts. `save` rejecting is the normal "not yet";
 * `onSaved` and `onFailed` report (log, plugin state) and must not throw.
 */
export function retryUntilSaved(options: {
  clock: PluginClock;
  everyMs: number;
  save: () => Promise<void>;
  onSaved: (attempts: number) => void;
  onFailed: (err: unknown, attempts: number) => void;
}): DurableRetry {
  const { clock, everyMs } = options;
  let attempts = 0;
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  const attempt = async (): Promise<void> => {
    attempts++;
    try {
      await options.save();
    } catch (err) {
      if (cancelled) return;
      options.onFailed(err, attempts);
      timer = clock.setTimeout(() => void attempt(), everyMs);
      return;
    }
    if (!cancelled) options.onSaved(attempts);
  };
  timer = clock.setTimeout(() => void attempt(), everyMs);
  return {
    cancel() {
      cancelled = true;
      if (timer) clock.clear(timer);
    },
  };
}
