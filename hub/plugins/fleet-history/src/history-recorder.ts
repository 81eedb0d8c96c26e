import type { BusCache } from '../../bus-cache/src/service.js';
import type { DebugEventInput } from '../../debug-ring/src/service.js';
import { MinuteAggregator } from './minute-aggregator.js';
import { historyEventOfRing } from './ring-records.js';
import type { HistoryStore } from './service.js';

export interface RecorderOptions {
  flushMs: number;
  retentionDays: number;
  maxBytes: number;
  /** How often retention and size are enforced. */
  trimMs: number;
  now: () => number;
  warn: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Listens to the bus-cache's ingest, folds it per device and minute in memory, and writes each
 * flush in one transaction: the ingest's cost per message is the fold, the database sees one write
 * per interval whatever the message rate.
 */
export class HistoryRecorder {
  private readonly aggregator = new MinuteAggregator();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly unsubscribe: () => void;
  private lastTrimAt = 0;

  constructor(
    cache: BusCache,
    readonly store: HistoryStore,
    private readonly options: RecorderOptions,
  ) {
    this.unsubscribe = cache.on('*', (m) => this.aggregator.add(m));
    this.timers.push(setInterval(() => this.flush(), options.flushMs).unref());
    this.trim();
  }

  /** A debug ring record: an incident's understanding or an audit is kept with the next flush, the rest is not the history's. */
  noteRing(event: DebugEventInput, atMs: number): void {
    const e = historyEventOfRing(event, atMs);
    if (e) this.aggregator.addEvent(e);
  }

  /** Writes what was gathered (a failed write is logged; those rows are lost, the ingest goes on). */
  flush(): void {
    const { minutes, events } = this.aggregator.drain();
    try {
      this.store.write(minutes, events);
    } catch (err) {
      this.options.warn('fleet history: a flush failed', { minutes: minutes.length, events: events.length, error: String(err) });
    }
    if (this.options.now() - this.lastTrimAt >= this.options.trimMs) this.trim();
  }

  /** Drops what is past the retention, then the oldest days while over the size bound. */
  trim(): number {
    this.lastTrimAt = this.options.now();
    try {
      return this.store.trim(this.options.now() - this.options.retentionDays * 86_400_000, this.options.maxBytes);
    } catch (err) {
      this.options.warn('fleet history: trimming failed', { error: String(err) });
      return 0;
    }
  }

  stop(): void {
    this.unsubscribe();
    for (const t of this.timers) clearInterval(t);
    this.flush();
    this.store.close();
  }
}
