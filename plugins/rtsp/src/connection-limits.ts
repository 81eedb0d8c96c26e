/** Why a connection was not admitted. */
export type Refusal = 'full' | 'per_address';

/**
 * Who may hold one of the server's connections: at most `total` at once and at most `perAddress`
 * from one remote address, so that one address (a scanner, a stuck client, an attacker's idle
 * sockets) can never take every slot and lock the other viewers out. A refused connection is closed
 * at once, before anything it sends is read. (When all slots are taken the server may free one, see
 * RtspServer: that is its call, this only counts.)
 */
export class ConnectionLimits {
  private readonly byAddress = new Map<string, number>();
  private open = 0;
  /** Connections refused since start, by reason. */
  readonly refused = { total: 0, perAddress: 0 };
  /** Connections closed to make room for a newer one (the oldest that never sent a request). */
  evicted = 0;

  constructor(
    readonly total: number,
    readonly perAddress: number,
  ) {}

  /** Takes a slot for `address`, or says which bound is reached (`count`: false when the caller will retry). */
  admit(address: string, count = true): Refusal | undefined {
    const mine = this.byAddress.get(address) ?? 0;
    if (mine >= this.perAddress) {
      if (count) this.refused.perAddress++;
      return 'per_address';
    }
    if (this.open >= this.total) {
      if (count) this.refused.total++;
      return 'full';
    }
    this.byAddress.set(address, mine + 1);
    this.open++;
    return undefined;
  }

  /** Gives back a slot taken by admit(). */
  release(address: string): void {
    const mine = this.byAddress.get(address) ?? 0;
    if (mine <= 0) return;
    if (mine === 1) this.byAddress.delete(address);
    else this.byAddress.set(address, mine - 1);
    this.open--;
  }
}
