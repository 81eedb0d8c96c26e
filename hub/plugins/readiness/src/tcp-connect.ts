import { connect } from 'node:net';
import type { Probe } from './device-facts.js';

/**
 * Whether something accepts a TCP connection at host:port within `timeoutMs`: the connection is
 * closed as soon as it opens (nothing is sent). Never rejects.
 */
export function tcpConnect(host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<Probe<{ address: string }>> {
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve({ ok: false, code: 'cancelled', reason: `${address}: the check was stopped before connecting` });
      return;
    }
    const socket = connect({ host, port });
    const finish = (outcome: Probe<{ address: string }>) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(outcome);
    };
    const onAbort = () => finish({ ok: false, code: 'cancelled', reason: `${address}: the check was stopped while connecting` });
    const timer = setTimeout(() => finish({ ok: false, code: 'connect_timeout', reason: `${address}: no connection within ${timeoutMs} ms` }), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => finish({ ok: true, value: { address } }));
    socket.once('error', (err: NodeJS.ErrnoException) => finish({ ok: false, code: 'connect_failed', reason: `${address}: ${err.code ?? err.message}` }));
  });
}
