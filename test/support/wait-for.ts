/**
 * Polls a condition every 10 ms until it holds, or fails after `timeoutMs` naming what it waited
 * for. For state that changes without an event to await (plugin states, counters, handler arrays).
 */
export function waitFor(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = (): void => {
      if (check()) return resolve();
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      setTimeout(tick, 10);
    };
    tick();
  });
}
