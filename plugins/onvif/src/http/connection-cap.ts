import type { Socket } from 'node:net';
import { unmapIpv4 } from 'lookout/lib/net';

export interface ConnectionCapOptions {
  /** Open connections from one remote address. */
  perAddress: number;
  /** Open connections in all. */
  total: number;
}

/**
 * Bounds the open connections per remote address and in all, so that one stranger cannot hold every
 * socket (and the memory behind them) before sending a credential. A connection over a bound is
 * destroyed as it arrives: no byte of it is read.
 */
export class ConnectionCap {
  private readonly byAddress = new Map<string, number>();
  private open = 0;
  /** Connections destroyed at arrival since the start. */
  refused = 0;

  constructor(private readonly o: ConnectionCapOptions) {}

  /** Counts the socket until it closes, or destroys it when a bound is reached; true when admitted. */
  admit(socket: Socket): boolean {
    const address = unmapIpv4(socket.remoteAddress ?? '');
    const mine = this.byAddress.get(address) ?? 0;
    if (mine >= this.o.perAddress || this.open >= this.o.total) {
      this.refused++;
      socket.destroy();
      return false;
    }
    this.byAddress.set(address, mine + 1);
    this.open++;
    socket.once('close', () => {
      this.open--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    });
    return true;
  }

  get connections(): number {
    return this.open;
  }
}
