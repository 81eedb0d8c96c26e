/**
 * Datagrams per second per sender, checked before any work is done on a datagram: a flooding sender
 * costs a map lookup per packet, not an HMAC. The node keys it on the source address alone (ports are free
 * to an attacker). Fixed one-second windows; at most
 * `maxSenders` senders are tracked (the oldest forgotten first), so spoofed sources cannot grow it.
 * Windows are reckoned on the monotonic clock: a wall-clock step back must not hold a sender's window open.
 */
export class SenderRate {
  private readonly windows = new Map<string, { startMs: number; count: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly maxSenders = 1024,
  ) {}

  /** True when this datagram from `sender` is within the rate (and counts it). `now`: monotonic ms. */
  allow(sender: string, now: number): boolean {
    let w = this.windows.get(sender);
    if (!w || now - w.startMs >= 1000) {
      this.windows.delete(sender);
      w = { startMs: now, count: 0 };
      this.windows.set(sender, w);
      while (this.windows.size > this.maxSenders) this.windows.delete(this.windows.keys().next().value!);
    }
    w.count += 1;
    return w.count <= this.perSecond;
  }

  get size(): number {
    return this.windows.size;
  }
}
