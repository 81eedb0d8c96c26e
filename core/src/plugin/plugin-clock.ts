import type { PluginClock } from './context.js';

/**
 * Timers of one plugin, all cleared when it stops, so a forgotten interval cannot outlive it. After
 * `clearAll` new timers are cleared at once: a start still running past its timeout cannot leave one.
 */
export function createPluginClock(now: () => number = Date.now): PluginClock & { clearAll(): void } {
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  const keep = (t: NodeJS.Timeout): NodeJS.Timeout => {
    if (closed) clearTimeout(t);
    else timers.add(t);
    return t;
  };
  return {
    now,
    setInterval(fn, ms) {
      return keep(setInterval(fn, ms));
    },
    setTimeout(fn, ms) {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
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
