import type { PluginClock } from './context.js';

/**
 * Timers of one plugin, all cleared when it stops, so a forgotten interval cannot outlive it. After
 * `clearAll` new timers are cleared at once: a start still running past its timeout cannot leave one.
 */
export function createPluginClock(now: () => number = Date.now, fault?: (err: unknown) => void): PluginClock & { clearAll(): void } {
  const timers = new Set<NodeJS.Timeout>();
  // A callback that throws would be an uncaught exception and end the process: it fails its plugin instead.
  const guard = (fn: () => unknown) => (): void => {
    try {
      const result = fn();
      if (fault && result instanceof Promise) result.catch(fault);
    } catch (err) {
      if (!fault) throw err;
      fault(err);
    }
  };
  let closed = false;
  const keep = (t: NodeJS.Timeout): NodeJS.Timeout => {
    if (closed) clearTimeout(t);
    else timers.add(t);
    return t;
  };
  return {
    now,
    setInterval(fn, ms) {
      return keep(setInterval(guard(fn), ms));
    },
    setTimeout(fn, ms) {
      const run = guard(fn);
      const t = setTimeout(() => {
        timers.delete(t);
        run();
      }, ms);
      return keep(t);
    },
    clear(t) {
      clearTimeout(t);
      timers.delete(t);
    },
    clearAll() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
