import { once } from 'node:events';
import type { Server } from 'node:net';
import { LookoutError, type ErrorCode } from 'lookout/core';

/**
 * Listens on host:port and resolves once bound; a bind failure (EADDRINUSE, EACCES…) rejects with a
 * LookoutError naming what could not listen, so a host reports it the same way whatever the server.
 */
export function listen(server: Server, port: number, host: string, what: { name: string; key?: string; code?: ErrorCode }): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(
        new LookoutError(what.code ?? 'config_invalid', `${what.name} cannot listen on ${host}:${port}: ${err.code ?? err.message}`, {
          cause: err,
          details: { ...(what.key ? { key: what.key } : {}), host, port, reason: err.code },
        }),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** The port a listening server got (the asked one, or the free one picked for 0). */
export function boundPort(server: Server, fallback: number): number {
  const address = server.address();
  return typeof address === 'object' && address ? address.port : fallback;
}

/** Closes a server and the keep-alive connections that would hold the close open until they time out. */
export async function closeServer(server: Server & { closeAllConnections?: () => void }): Promise<void> {
  if (!server.listening) return;
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections?.();
  await closed;
}
