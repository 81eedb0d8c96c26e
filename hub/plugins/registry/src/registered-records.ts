import type { PluginClock } from 'lookout/core';

/** A ring record of the registry's. */
export interface RegistryRecord {
  kind: 'registry';
  device_id?: string;
  message: string;
  details?: unknown;
}

/** Device ids a folded record lists (its count says how many there were). */
const MAX_LISTED = 100;

/**
 * The debug ring's "registered by hello" records: the first `burst` of each `intervalMs` one per
 * device, as they come; past them, one record per interval naming the devices. A fleet connecting
 * at once (a broker restart) made one record per device, and a thousand of them pushed the hub's
 * failures out of the ring (2 000 records) and set off a ring save each (issue 31).
 */
export class RegisteredRecords {
  private windowStart = -Infinity;
  private inWindow = 0;
  private folded: string[] = [];
  private foldedCount = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: {
      record: (r: RegistryRecord) => void;
      burst: number;
      intervalMs: number;
      clock: Pick<PluginClock, 'now' | 'setTimeout' | 'clear'>;
    },
  ) {}

  add(r: RegistryRecord & { device_id: string }): void {
    const now = this.o.clock.now();
    if (now - this.windowStart >= this.o.intervalMs) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow++ < this.o.burst) return this.o.record(r);
    if (this.folded.length < MAX_LISTED) this.folded.push(r.device_id);
    this.foldedCount++;
    this.timer ??= this.o.clock.setTimeout(() => this.flush(), this.windowStart + this.o.intervalMs - now);
  }

  /** Records what is folded now (the timer's turn, or the hub stopping). */
  flush(): void {
    if (this.timer) this.o.clock.clear(this.timer);
    this.timer = undefined;
    if (this.foldedCount === 0) return;
    const ids = this.folded;
    const count = this.foldedCount;
    this.folded = [];
    this.foldedCount = 0;
    this.o.record({
      kind: 'registry',
      message: `${count} more device(s) registered by hello within ${this.o.intervalMs} ms: ${ids.slice(0, 10).join(', ')}${count > 10 ? ', …' : ''}`,
      details: { count, device_ids: ids },
    });
  }
}
