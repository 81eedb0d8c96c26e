export interface Early {
  topic: string;
  payload: Buffer;
  retain: boolean;
  /** When it arrived, as the ingest dates it (a replica's receive time): it is counted and applied at that time. */
  at: number;
  /** This hub's clock when it was held: its wait is measured from here. */
  heldAt: number;
}

export interface HoldLimits {
  /** How long after start-up a message waits for its device to become known (0: refused at once). */
  windowMs: number;
  maxMessages: number;
  maxBytes: number;
  maxPerDevice: number;
  maxBytesPerDevice: number;
}

/**
 * Enough for the retained status of a large fleet at start-up, and for a few seconds of a device's
 * messages (20 a second) ahead of its hello; past a bound an unknown device's message is refused at
 * once, as it would be later.
 */
export const DEFAULT_HOLD_LIMITS: HoldLimits = {
  windowMs: 5_000,
  maxMessages: 20_000,
  maxBytes: 16 * 1024 * 1024,
  maxPerDevice: 256,
  maxBytesPerDevice: 1024 * 1024,
};

interface Waiting {
  messages: Early[];
  bytes: number;
}

/**
 * Valid messages of devices not known yet, held until the device becomes known (its hello, an
 * admission rule) or their wait ends. While the hub starts, every one waits: the bus cache
 * subscribes (and the broker sends every retained status) before the registry, which starts after
 * it, has said which devices its file names. After start-up each waits `windowMs`: hub replicas
 * apply one shared stream, and a device's hello taken by one replica can land in it after the
 * status and telemetry another took. Bounded per device and in all, in count and bytes.
 */
export class EarlyMessages {
  private readonly byDevice = new Map<string, Waiting>();
  private settled = false;
  private count = 0;
  private bytes = 0;
  private readonly limits: HoldLimits;

  constructor(limits: Partial<HoldLimits> = {}) {
    this.limits = { ...DEFAULT_HOLD_LIMITS, ...limits };
  }

  /** Messages held now. */
  get size(): number {
    return this.count;
  }

  /** Bytes of the payloads held now. */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Keeps the message until its device is known or its wait ends; false when it may not wait (past a bound, or no window). */
  hold(deviceId: string, topic: string, payload: Buffer, retain: boolean, at: number, heldAt: number): boolean {
    const l = this.limits;
    if (this.settled && l.windowMs <= 0) return false;
    if (this.count >= l.maxMessages || this.bytes + payload.length > l.maxBytes) return false;
    let waiting = this.byDevice.get(deviceId);
    if (waiting && (waiting.messages.length >= l.maxPerDevice || waiting.bytes + payload.length > l.maxBytesPerDevice)) return false;
    if (!waiting && payload.length > l.maxBytesPerDevice) return false;
    if (!waiting) this.byDevice.set(deviceId, (waiting = { messages: [], bytes: 0 }));
    // A copy: the bus may reuse the buffer it handed over.
    waiting.messages.push({ topic, payload: Buffer.from(payload), retain, at, heldAt });
    waiting.bytes += payload.length;
    this.count++;
    this.bytes += payload.length;
    return true;
  }

  /** The device's messages, oldest first, now that it is known; they no longer wait. */
  take(deviceId: string): Early[] | undefined {
    const waiting = this.byDevice.get(deviceId);
    if (!waiting) return undefined;
    this.forget(deviceId, waiting);
    return waiting.messages;
  }

  /**
   * Start-up is over: from now on a message waits `windowMs`, and those held so far start their
   * wait now. Returns the devices whose messages wait.
   */
  settle(now: number): string[] {
    this.settled = true;
    for (const waiting of this.byDevice.values()) for (const m of waiting.messages) m.heldAt = now;
    return [...this.byDevice.keys()];
  }

  /**
   * The messages whose wait ended by `now`, per device in arrival order; of a device that
   * `isKnown` says is known by now (a rule that admits it came since), every message at once, so
   * that they are applied in their order. Nothing ends while the hub starts.
   */
  expire(now: number, isKnown: (deviceId: string) => boolean): Early[] {
    if (!this.settled) return [];
    const out: Early[] = [];
    const endedBy = now - this.limits.windowMs;
    for (const [deviceId, waiting] of this.byDevice) {
      const messages = waiting.messages;
      if (messages[0].heldAt > endedBy) continue;
      if (isKnown(deviceId)) {
        this.forget(deviceId, waiting);
        for (const m of messages) out.push(m);
        continue;
      }
      let n = 0;
      let bytes = 0;
      while (n < messages.length && messages[n].heldAt <= endedBy) bytes += messages[n++].payload.length;
      for (const m of messages.splice(0, n)) out.push(m);
      waiting.bytes -= bytes;
      this.count -= n;
      this.bytes -= bytes;
      if (messages.length === 0) this.byDevice.delete(deviceId);
    }
    return out;
  }

  private forget(deviceId: string, waiting: Waiting): void {
    this.byDevice.delete(deviceId);
    this.count -= waiting.messages.length;
    this.bytes -= waiting.bytes;
  }
}
