import type { Logger } from 'lookout/core';
import type { StateKeeper } from '../services/hub-services.js';

/** The bus cache changes ten times a second per device: its state is written at most this often. */
export const DEFAULT_SAVE_INTERVAL_MS = 5000;

/**
 * The debounce every state store shares: a key's snapshot is taken and written at most once per
 * interval while it changes, one write at a time per key, and once more at close. A snapshot is
 * taken at write time, so many changes cost one serialisation.
 */
export class StateKeepers {
  private readonly keepers = new Map<string, Keeper>();

  constructor(
    private readonly write: (key: string, value: unknown) => Promise<void>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  keep(key: string, snapshot: () => unknown): StateKeeper {
    // A second keeper of a key (a store handed to the next hub in one process) takes its place.
    const keeper = new Keeper(key, snapshot, this.write, this.intervalMs, this.log);
    this.keepers.set(key, keeper);
    return keeper;
  }

  /** Writes every changed key now (at the hub's stop, after its plugins stopped) and stops the timers. */
  async close(): Promise<void> {
    await Promise.all([...this.keepers.values()].map((k) => k.close()));
  }
}

class Keeper implements StateKeeper {
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly key: string,
    private readonly snapshot: () => unknown,
    private readonly write: (key: string, value: unknown) => Promise<void>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  changed(): void {
    this.dirty = true;
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.intervalMs);
    // A pending save never keeps the process alive: the hub's stop writes it.
    this.timer.unref();
  }

  async flush(): Promise<void> {
    // One write at a time: a change during a write is saved by the next.
    while (this.writing) await this.writing;
    if (!this.dirty) return;
    this.dirty = false;
    this.writing = this.once().finally(() => (this.writing = undefined));
    await this.writing;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async once(): Promise<void> {
    try {
      // A snapshot may be a promise: its owner took the state at the call and finishes its JSON over later turns.
      await this.write(this.key, await this.snapshot());
    } catch (err) {
      // A full disk must not stop the hub; the state stays in memory and the next change retries.
      this.dirty = true;
      this.log.warn({ err, key: this.key }, 'hub state not saved');
    }
  }
}
