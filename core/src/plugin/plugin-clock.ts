import type { PluginClock } from './context.js';

/** Timers of one plugin, all cleared when it stops, so a forgotten interval cannot outlive it. */
export function createPluginClock(now: () => number = Date.now): PluginClock & { clearAll(): void } {
  const timers = new Set<NodeJS.Timeout>();
  return {
    now,
    setInterval(fn, ms) {
      const t = setInterval(fn, ms);
      timers.add(t);
      return t;
    },
    setTimeout(fn, ms) {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      timers.add(t);
      return t;
    },
    clear(t) {
      clearTimeout(t);
      timers.delete(t);
    },
    clearAll() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
