interface Early {
  topic: string;
  payload: Buffer;
  retain: boolean;
  at: number;
}

/** Enough for the retained status of a large fleet; past it, an unknown device's message is refused as it would be later. */
const MAX_EARLY_MESSAGES = 20_000;
const MAX_EARLY_BYTES = 16 * 1024 * 1024;

/**
 * Valid messages of devices not known yet, held while the hub starts: the bus cache subscribes
 * (and the broker sends every retained status) before the registry, which starts after it, has
 * said which devices its file names. Bounded in count and bytes; after `drain` nothing is held.
 */
export class EarlyMessages {
  private held: Early[] | undefined = [];
  private bytes = 0;

  /** Keeps the message for later; false once drained or when full. */
  hold(topic: string, payload: Buffer, retain: boolean, at: number): boolean {
    if (!this.held || this.held.length >= MAX_EARLY_MESSAGES || this.bytes + payload.length > MAX_EARLY_BYTES) return false;
    // A copy: the bus may reuse the buffer it handed over.
    this.held.push({ topic, payload: Buffer.from(payload), retain, at });
    this.bytes += payload.length;
    return true;
  }

  /** The messages held, oldest first; holds nothing from now on. */
  drain(): Early[] {
    const out = this.held ?? [];
    this.held = undefined;
    this.bytes = 0;
    return out;
  }
}
