/**
 * Who may hold one of the server's connections: at most `total` at once and at most `perAddress`
 * from one remote address, so that one address (a scanner, a stuck client, an attacker's idle
 * sockets) can never take every slot and lock the other viewers out. A refused connection is closed
 * at once, before anything it sends is read.
 */
export class ConnectionLimits {
  private readonly byAddress = new Map<string, number>();
  private open = 0;
  /** Connections refused since start, by reason. */
  readonly refused = { total: 0, perAddress: 0 };

  constructor(
    readonly total: number,
    readonly perAddress: number,
  ) {}

  /** Takes a slot for `address`; false (and counted) when either bound is reached. */
  admit(address: string): boolean {
    const mine = this.byAddress.get(address) ?? 0;
    if (this.open >= this.total) {
      this.refused.total++;
      return false;
    }
    if (mine >= this.perAddress) {
      this.refused.perAddress++;
      return false;
    }
    this.byAddress.set(address, mine + 1);
    this.open++;
    return true;
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
