import type { Server, Socket } from 'node:net';
import type { BusLogger } from 'lookout/lib/mqtt';

export interface ConnectionCaps {
  /** Connections the server holds in all; more are closed as they are accepted. */
  maxConnections: number;
  /** Connections one remote address may hold; more from it are closed at once, other addresses still connect. */
  maxConnectionsPerAddress: number;
}

/** A refusal is logged at most this often (with the count since), so a flood does not flood the log. */
const LOG_EVERY_MS = 10_000;

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client. */
function addressKey(address: string | undefined): string {
  return address?.startsWith('::ffff:') ? address.slice(7) : (address ?? '');
}

/**
 * Caps the servers' connections in all (server.maxConnections: Node closes the extra ones before
 * any of our code runs, so they cost neither memory nor a parser; with several servers, the plain
 * and the TLS listener, their sum is checked in `admit` too) and per remote address (checked first
 * thing for each accepted socket, whichever listener took it). `admit` is called from the
 * connection listener: false means the socket was destroyed and must not be handed on.
 */
export function connectionAdmission(servers: Server | Server[], caps: ConnectionCaps, log: BusLogger) {
  const all = Array.isArray(servers) ? servers : [servers];
  for (const server of all) server.maxConnections = caps.maxConnections;
  const perAddress = new Map<string, number>();
  let held = 0;
  let refused = 0;
  let unlogged = 0;
  let loggedAt = 0;
  const refuse = (reason: string, remote: string): void => {
    refused++;
    unlogged++;
    const now = Date.now();
    if (now - loggedAt < LOG_EVERY_MS) return;
    log.warn({ reason, remote, refused: unlogged, ...caps }, 'broker refused connections over its cap');
    loggedAt = now;
    unlogged = 0;
  };
  for (const server of all) server.on('drop', (data?: { remoteAddress?: string }) => refuse('total', addressKey(data?.remoteAddress)));
  return {
    get refused() {
      return refused;
    },
    admit(socket: Socket): boolean {
      const key = addressKey(socket.remoteAddress);
      if (held >= caps.maxConnections) {
        socket.destroy();
        refuse('total', key);
        return false;
      }
      const fromAddress = perAddress.get(key) ?? 0;
      if (fromAddress >= caps.maxConnectionsPerAddress) {
        socket.destroy();
        refuse('per_address', key);
        return false;
      }
      perAddress.set(key, fromAddress + 1);
      held++;
      socket.once('close', () => {
        held--;
        const left = (perAddress.get(key) ?? 1) - 1;
        if (left > 0) perAddress.set(key, left);
        else perAddress.delete(key);
      });
      return true;
    },
  };
}
