import { readFileSync } from 'node:fs';

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status); null once it is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a process has used; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: the fields after it start past its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return null;
  }
}

interface Series {
  /** A label per process lifetime: `hub#1`, `broker#2`, `edge soak-real-1`. */
  label: string;
  role: string;
  pid: number;
  startedAt: number;
  samples: { t: number; rss: number }[];
  cpuAtStart: number | null;
  cpuLast: number | null;
  cpuLastAt: number;
}

export interface RssRow {
  label: string;
  role: string;
  pid: number;
  samples: number;
  minMb: number;
  maxMb: number;
  lastMb: number;
  /** RSS at 25 %, 50 %, 75 % of the lifetime. */
  quartilesMb: [number, number, number];
  /** Growth over the second half of the lifetime, MiB per minute (least squares). */
  slopeMbPerMin: number;
  cpuPct: number | null;
}

const MB = 1024 * 1024;

/**
 * Samples the RSS of every process the soak watches, at a fixed period, per process lifetime (a
 * restarted hub or broker is a new row). Bounded: at most `maxSamples` kept per lifetime (older
 * ones thinned by halving).
 */
export class RssMonitor {
  private readonly series: Series[] = [];
  private readonly current = new Map<string, Series>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly maxSamples = 2000) {}

  /** Starts watching `pid` as `role` (a role watched before gets a new lifetime row). */
  watch(role: string, pid: number | undefined, label?: string): void {
    if (pid === undefined) return;
    const lifetimes = this.series.filter((s) => s.role === role).length;
    const s: Series = {
      label: label ?? `${role}#${lifetimes + 1}`,
      role,
      pid,
      startedAt: Date.now(),
      samples: [],
      cpuAtStart: cpuSeconds(pid),
      cpuLast: null,
      cpuLastAt: Date.now(),
    };
    this.series.push(s);
    this.current.set(role, s);
    this.sampleOne(s);
  }

  start(periodMs: number): void {
    this.timer = setInterval(() => this.sample(), periodMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  sample(): void {
    for (const s of this.current.values()) this.sampleOne(s);
  }

  /** The latest RSS of a role's current lifetime, in MiB. */
  latestMb(role: string): number | null {
    const s = this.current.get(role);
    const last = s?.samples[s.samples.length - 1];
    return last ? last.rss / MB : null;
  }

  rows(): RssRow[] {
    return this.series.filter((s) => s.samples.length > 0).map((s) => rowOf(s));
  }

  private sampleOne(s: Series): void {
    const rss = rssBytes(s.pid);
    if (rss === null) return;
    const cpu = cpuSeconds(s.pid);
    if (cpu !== null) {
      s.cpuLast = cpu;
      s.cpuLastAt = Date.now();
    }
    s.samples.push({ t: Date.now(), rss });
    if (s.samples.length > this.maxSamples) s.samples = s.samples.filter((_, i) => i % 2 === 0);
  }
}

function rowOf(s: Series): RssRow {
  const values = s.samples.map((x) => x.rss);
  const at = (q: number) => values[Math.min(values.length - 1, Math.floor(q * values.length))] / MB;
  const half = s.samples.slice(Math.floor(s.samples.length / 2));
  const elapsedSec = (s.cpuLastAt - s.startedAt) / 1000;
  return {
    label: s.label,
    role: s.role,
    pid: s.pid,
    samples: values.length,
    minMb: Math.min(...values) / MB,
    maxMb: Math.max(...values) / MB,
    lastMb: values[values.length - 1] / MB,
    quartilesMb: [at(0.25), at(0.5), at(0.75)],
    slopeMbPerMin: slope(half.map((x) => ({ x: x.t / 60_000, y: x.rss / MB }))),
    cpuPct: s.cpuAtStart !== null && s.cpuLast !== null && elapsedSec > 1 ? (100 * (s.cpuLast - s.cpuAtStart)) / elapsedSec : null,
  };
}

/** Least-squares slope of y over x; 0 with fewer than 3 points. */
function slope(points: { x: number; y: number }[]): number {
  if (points.length < 3) return 0;
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
