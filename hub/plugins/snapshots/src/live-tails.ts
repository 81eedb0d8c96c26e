import { LiveTail, type LiveTailOptions } from './live-tail.js';

export interface LiveTailsOptions {
  /** Tails open at once; a new one past it closes the least recently used. */
  max: number;
  /** A tail unused for this long is closed. */
  idleMs: number;
  /** `fingerprint`: what the device's TLS certificate must be (an https url), as given to `get`. */
  create(deviceId: string, url: string, fingerprint?: string | null): LiveTail;
}

export type TailSettings = Omit<LiveTailOptions, 'deviceId' | 'url' | 'token' | 'onWarm' | 'agent' | 'fingerprint'>;

/**
 * The hub's live tails, one per device: opened on a device's first snapshot, kept warm while
 * snapshots keep coming, closed when idle, and bounded in number (each holds a connection and a GOP).
 */
export class LiveTails {
  private readonly tails = new Map<string, { tail: LiveTail; usedAt: number }>();

  constructor(private readonly options: LiveTailsOptions) {}

  /**
   * The device's tail at `url`, opened (cold) when there is none, its device moved to another URL
   * or (over https) announced another certificate fingerprint.
   */
  get(deviceId: string, url: string, now = Date.now(), fingerprint?: string | null): LiveTail {
    const entry = this.tails.get(deviceId);
    if (entry && entry.tail.url === url && entry.tail.fingerprint === fingerprint) {
      entry.usedAt = now;
      // Most recently used last: Map keeps insertion order.
      this.tails.delete(deviceId);
      this.tails.set(deviceId, entry);
      return entry.tail;
    }
    if (entry) this.drop(deviceId);
    while (this.tails.size >= this.options.max) this.drop(this.tails.keys().next().value!);
    const tail = this.options.create(deviceId, url, fingerprint);
    this.tails.set(deviceId, { tail, usedAt: now });
    return tail;
  }

  /** Closes the tails unused for the idle period. */
  sweep(now = Date.now()): void {
    for (const [id, entry] of this.tails) if (now - entry.usedAt >= this.options.idleMs) this.drop(id);
  }

  get size(): number {
    return this.tails.size;
  }

  has(deviceId: string): boolean {
    return this.tails.has(deviceId);
  }

  closeAll(): void {
    for (const id of [...this.tails.keys()]) this.drop(id);
  }

  private drop(deviceId: string): void {
    this.tails.get(deviceId)?.tail.close();
    this.tails.delete(deviceId);
  }
}
