import type { HubLogLines } from 'lookout/hub';
import type { SecretScrubber } from './secret-scrub.js';

const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
const NAMES = Object.fromEntries(Object.entries(LEVELS).map(([k, v]) => [v, k]));

/** The hub's newest log lines as GET /debug/log/tail answers them: parsed, level by name, secrets out. */
export function hubLogTail(logs: HubLogLines, q: { lines: number; max_bytes: number; level?: string; component?: string }, scrub: SecretScrubber) {
  const tail = logs.tail({
    lines: q.lines,
    maxBytes: q.max_bytes,
    ...(q.level ? { minLevel: LEVELS[q.level] } : {}),
    ...(q.component ? { component: q.component } : {}),
  });
  return {
    lines: tail.lines.map((l) => {
      let record: unknown;
      try {
        record = JSON.parse(l.line);
      } catch {
        record = { msg: l.line };
      }
      return {
        seq: l.seq,
        time: new Date(l.time).toISOString(),
        level: NAMES[l.level] ?? String(l.level),
        component: l.component,
        record: scrub.value(record),
      };
    }),
    matched: tail.matched,
    held: tail.held,
    dropped: tail.dropped,
    max_lines: logs.maxLines,
    max_bytes: logs.maxBytes,
  };
}
