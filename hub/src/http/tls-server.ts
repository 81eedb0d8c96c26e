import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { LookoutError, type Logger } from 'lookout/core';
import { boundPort, closeServer, listen } from 'lookout/lib/net';
import { reloadingCertificate, type ReloadingCertificate, SERVED_TLS_CONTEXT } from 'lookout/lib/tls';
import { answerClientError } from './client-error.js';
import type { HubTransport } from './hub-transport.js';

export interface HubServerOptions {
  handler: (req: IncomingMessage, res: ServerResponse) => void;
  transport: HubTransport;
  host: string;
  port: number;
  logger: Logger;
  /** Quiet period after a change to the certificate files before they are read (writers replace the key, then the certificate). Default 200 ms. */
  reloadDebounceMs?: number;
  /** Reload when the certificate or key file changes (default true). */
  watchFiles?: boolean;
  /** Reload the certificate on SIGHUP (default true; a process with several hubs reloads each). */
  reloadOnSighup?: boolean;
  /** From accept to a finished TLS handshake: a stranger holds a socket no longer without one. Default 10 s. */
  handshakeTimeoutMs?: number;
}

export interface HubServer {
  readonly server: HttpServer | HttpsServer;
  readonly scheme: 'http' | 'https';
  readonly port: number;
  /** SHA-256 of the certificate new connections get (HTTPS only). */
  fingerprint(): string | undefined;
  /** Reads the certificate files again; keeps the one served when they are not a fit pair (and says why). */
  reload(): Promise<{ ok: true; fingerprint: string; changed: boolean } | { ok: false; reason: string }>;
  close(): Promise<void>;
}

/**
 * The hub's listening server: plain HTTP, or HTTPS (HTTP/1.1) whose certificate is replaced without
 * a restart and without dropping connections (tls.Server#setSecureContext: connections already
 * open keep the context they shook hands with, new ones get the new one), on SIGHUP and when the
 * certificate or key file changes (fs.watch on their folders: `lookout certs` and most tools
 * replace files by rename, which a watch on the file itself would lose).
 *
 * HTTPS/1.1, not HTTP/2: node 20's http2.createSecureServer({ allowHTTP1: true }) does not enforce
 * headersTimeout/requestTimeout on its HTTP/1.1 connections (a request whose headers never finish
 * stays open; the https server answers it 408), and has no closeAllConnections for a clean stop:
 * the bounds the hub puts on what a stranger sends before login would be lost for HTTP/1.1 clients.
 */
export async function startHubServer(o: HubServerOptions): Promise<HubServer> {
  const t = o.transport;
  let certificate: ReloadingCertificate | undefined;
  let server: HttpServer | HttpsServer;
  if (t.scheme === 'https') {
    certificate = await reloadingCertificate({
      certPath: t.certPath,
      keyPath: t.keyPath,
      what: 'the hub',
      log: o.logger,
      // A change seen before the server exists (it is made from the first pair) waits for the next one.
      onChange: (next) => {
        if (server) (server as HttpsServer).setSecureContext({ cert: next.cert, key: next.key, ...SERVED_TLS_CONTEXT });
      },
      ...(o.reloadDebounceMs !== undefined ? { debounceMs: o.reloadDebounceMs } : {}),
      ...(o.watchFiles !== undefined ? { watchFiles: o.watchFiles } : {}),
      ...(o.reloadOnSighup !== undefined ? { reloadOnSighup: o.reloadOnSighup } : {}),
    }).catch((err: unknown) => {
      throw new LookoutError('config_invalid', `the hub's TLS certificate: ${(err as Error).message}`, {
        details: { key: t.source === 'flags' ? '--tls-cert' : '--tls', cert: t.certPath, key_file: t.keyPath },
      });
    });
    const pair = certificate.current();
    if (pair.notAfter.getTime() < Date.now()) {
      certificate.close();
      throw new LookoutError('config_invalid', `the hub's TLS certificate ${t.certPath} expired on ${pair.notAfter.toISOString()}: renew it (lookout certs)`, {
        details: { key: '--tls-cert', cert: t.certPath },
      });
    }
    server = createHttpsServer({ cert: pair.cert, key: pair.key, ...SERVED_TLS_CONTEXT, handshakeTimeout: o.handshakeTimeoutMs ?? 10_000 }, o.handler);
  } else {
    server = createHttpServer(o.handler);
  }
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.on('clientError', answerClientError);
  try {
    await listen(server, o.port, o.host, { name: 'the hub', key: '--port' });
  } catch (err) {
    certificate?.close();
    throw err;
  }
  const port = boundPort(server, o.port);
  return {
    server,
    scheme: t.scheme,
    port,
    fingerprint: () => certificate?.current().fingerprint,
    reload: () => (certificate ? certificate.reload() : Promise.resolve({ ok: false, reason: 'the hub serves plain HTTP' })),
    async close() {
      certificate?.close();
      await closeServer(server);
    },
  };
}
