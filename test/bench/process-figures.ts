import { readFileSync } from 'node:fs';

const CLOCK_TICKS = 100; // getconf CLK_TCK on Linux
const PAGE_BYTES = 4096;

/** The p-quantile (0..1) of `xs`, nearest rank; NaN for none. */
export function pct(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(s.length * p) - 1))];
}

/** A process's CPU time (user + system) and resident memory from /proc; NaN once it has exited. */
export function procStat(pid: number): { cpuMs: number; rssBytes: number } {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS, rssBytes: Number(fields[21]) * PAGE_BYTES };
  } catch {
    return { cpuMs: NaN, rssBytes: NaN };
  }
}

/** One value of a hub's /metrics text (prom-client's default metrics carry the lookout_hub_ prefix). */
export function hubMetric(text: string, name: string): number {
  return Number(new RegExp(`^lookout_hub_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}
