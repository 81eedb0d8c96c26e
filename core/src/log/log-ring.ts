/** pino's numeric levels by name, and back. */
export const LOG_LEVELS = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

/** One line the hub logged, as kept: its JSON as pino wrote it (already redacted by key) and what filters need. */
export interface LogLine {
  seq: number;
  /** Epoch ms (pino's `time`). */
  time: number;
  level: number;
  /** The child logger's `component` or `plugin`, else the logger's `name`. */
  component: string | null;
  line: string;
}

export interface LogTailFilter {
  /** Newest lines to return, at most. */
  lines: number;
  /** Bytes of the returned lines, at most (newest kept first). */
  maxBytes: number;
  /** Only lines at this level or above. */
  minLevel?: number;
  /** Only lines of this component. */
  component?: string;
}

export interface LogTail {
  /** Oldest first. */
  lines: LogLine[];
  /** Lines matching the filter before the bounds. */
  matched: number;
  /** Lines held, and pushed out since start. */
  held: number;
  dropped: number;
}

export interface LogRingOptions {
  maxLines?: number;
  maxBytes?: number;
}

export const DEFAULT_LOG_RING_LINES = 2000;
export const DEFAULT_LOG_RING_BYTES = 1024 * 1024;
/** One line longer than this is cut (a log line carrying a whole answer must not push the rest out). */
const MAX_LINE_BYTES = 16 * 1024;

/**
 * The hub's recent log lines in memory, bounded in count and bytes, oldest dropped first: a pino
 * destination (`write` takes one JSON line), read by GET /debug/log/tail and the debug export.
 */
export class LogRing {
  readonly maxLines: number;
  readonly maxBytes: number;
  private readonly entries: LogLine[] = [];
  private head = 0;
  private bytes = 0;
  private seq = 0;
  private droppedCount = 0;

  constructor(options: LogRingOptions = {}) {
    this.maxLines = options.maxLines ?? DEFAULT_LOG_RING_LINES;
    this.maxBytes = options.maxBytes ?? DEFAULT_LOG_RING_BYTES;
  }

  /** pino's destination call: one or more newline-terminated JSON lines. */
  write(chunk: string): boolean {
    for (const raw of chunk.split('\n')) if (raw.length > 0) this.push(raw);
    return true;
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  tail(filter: LogTailFilter): LogTail {
    const matching: LogLine[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i];
      if (filter.minLevel !== undefined && e.level < filter.minLevel) continue;
      if (filter.component !== undefined && e.component !== filter.component) continue;
      matching.push(e);
    }
    const out: LogLine[] = [];
    let bytes = 0;
    for (let i = matching.length - 1; i >= 0 && out.length < filter.lines; i--) {
      const e = matching[i];
      bytes += Buffer.byteLength(e.line) + 1;
      if (bytes > filter.maxBytes) break;
      out.push(e);
    }
    return { lines: out.reverse(), matched: matching.length, held: this.size, dropped: this.droppedCount };
  }

  private push(raw: string): void {
    const line = Buffer.byteLength(raw) > MAX_LINE_BYTES ? `${Buffer.from(raw).subarray(0, MAX_LINE_BYTES).toString('utf8')}…[cut]` : raw;
    let parsed: Record<string, unknown> = {};
    try {
      const value: unknown = JSON.parse(raw);
      if (value && typeof value === 'object') parsed = value as Record<string, unknown>;
    } catch {
      // A line that is not JSON (cut above, or another writer) is kept as text at info.
    }
    const component = [parsed.component, parsed.plugin, parsed.name].find((v): v is string => typeof v === 'string');
    const entry: LogLine = {
      seq: ++this.seq,
      time: typeof parsed.time === 'number' ? parsed.time : Date.now(),
      level: typeof parsed.level === 'number' ? parsed.level : LOG_LEVELS.info,
      component: component ?? null,
      line,
    };
    this.entries.push(entry);
    this.bytes += Buffer.byteLength(line);
    while (this.size > this.maxLines || (this.bytes > this.maxBytes && this.size > 1)) {
      const old = this.entries[this.head];
      this.bytes -= Buffer.byteLength(old.line);
      this.head++;
      this.droppedCount++;
    }
    // Compact now and then so the array does not grow without bound.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }
}
