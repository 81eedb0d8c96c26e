import type { DividedApply } from 'lookout/hub';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { DebugEventInput } from '../../debug-ring/src/service.js';
import { MinuteAggregator } from './minute-aggregator.js';
import { historyEventOfRing } from './ring-records.js';
import { MINUTES_CHANNEL, shareMinutes, sharedMinutesOf } from './shared-minutes.js';
import type { HistoryEvent, HistoryStore, MinuteRow } from './service.js';

/**
 * Rows (device-minutes, events) one transaction writes: a flush of a large fleet goes in slices, one
 * per turn of the event loop. SQLite writes on the hub's main thread, and one transaction of a
 * thousand devices' minutes every flush held the ingest up for tens of milliseconds (issue 31).
 */
export const HISTORY_WRITE_SLICE = 100;

export interface RecorderOptions {
  flushMs: number;
  retentionDays: number;
  maxBytes: number;
  /** How often retention and size are enforced. */
  trimMs: number;
  now: () => number;
  warn: (message: string, fields: Record<string, unknown>) => void;
  /** Rows per transaction (HISTORY_WRITE_SLICE). */
  slice?: number;
  /**
   * On a hub replica that divides the apply: the dets of the devices it owns are folded here (not
   * the foreign ones) and their rows shared; the others' come from their owners (shared-minutes.ts).
   */
  divided?: DividedApply;
}

/**
 * Listens to the bus-cache's ingest, folds it per device and minute in memory, and writes each
 * flush in transactions of HISTORY_WRITE_SLICE rows, one per turn: the ingest's cost per message is
 * the fold, the database sees a write per interval and slice whatever the message rate.
 */
export class HistoryRecorder {
  private readonly aggregator = new MinuteAggregator();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly unsubscribe: () => void;
  private readonly offShared: () => void;
  private lastTrimAt = 0;
  /** Drained but not written yet, oldest first: the slices still to come. */
  private minutes: MinuteRow[] = [];
  private events: HistoryEvent[] = [];
  private next: NodeJS.Immediate | undefined;

  constructor(
    cache: BusCache,
    readonly store: HistoryStore,
    private readonly options: RecorderOptions,
  ) {
    this.unsubscribe = cache.on('*', (m) => this.aggregator.add(m));
    this.offShared = options.divided?.onRecord(MINUTES_CHANNEL, (value) => this.takeShared(value)) ?? (() => undefined);
    this.timers.push(setInterval(() => this.flush(), options.flushMs).unref());
    this.trim();
  }

  /** A debug ring record: an incident's understanding or an audit is kept with the next flush, the rest is not the history's. */
  noteRing(event: DebugEventInput, atMs: number): void {
    const e = historyEventOfRing(event, atMs);
    if (e) this.aggregator.addEvent(e);
  }

  /** Writes what was gathered, a slice now and the rest over the next turns (a failed write is logged; those rows are lost, the ingest goes on). */
  flush(): void {
    this.drain();
    if (!this.next) this.writeSlice();
    if (this.options.now() - this.lastTrimAt >= this.options.trimMs) this.trim();
  }

  /** Writes everything gathered now, in one transaction: a read of the history answers with all of it. */
  flushNow(): void {
    if (this.next) clearImmediate(this.next);
    this.drain();
    this.writeSlice(Infinity);
  }

  /** What was folded since the last drain goes behind what is still to be written (a device-minute written again merges with what is stored), and to the other replicas. */
  private drain(): void {
    const { minutes, events } = this.aggregator.drain();
    if (this.options.divided) shareMinutes(this.options.divided, minutes);
    this.minutes = this.minutes.concat(minutes);
    this.events = this.events.concat(events);
  }

  /** Rows another replica folded from the dets of a device it owns: written with the next slice, merged with this minute's own. */
  private takeShared(value: unknown): void {
    const { rows, skipped } = sharedMinutesOf(value);
    if (skipped > 0) this.options.warn('fleet history: minute rows from another replica that are not rows were skipped', { skipped });
    this.minutes = this.minutes.concat(rows);
  }

  private writeSlice(limit = this.options.slice ?? HISTORY_WRITE_SLICE): void {
    this.next = undefined;
    const minutes = this.minutes.splice(0, limit);
    const events = this.events.splice(0, limit);
    try {
      this.store.write(minutes, events);
    } catch (err) {
      this.options.warn('fleet history: a flush failed', { minutes: minutes.length, events: events.length, error: String(err) });
    }
    if (this.minutes.length > 0 || this.events.length > 0) this.next = setImmediate(() => this.writeSlice());
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
    this.offShared();
    for (const t of this.timers) clearInterval(t);
    // At stop everything left goes at once: the store closes next.
    this.flushNow();
    this.store.close();
  }
}
