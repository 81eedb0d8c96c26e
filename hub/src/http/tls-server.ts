import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { basename, dirname } from 'node:path';
import { LookoutError } from '../../../core/src/errors/lookout-error.js';
import type { Logger } from '../../../core/src/log/logger.js';
import { boundPort, closeServer, listen } from '../../../core/src/net/listen.js';
import { keyMatchesCertificate } from '../../../core/src/tls/certificate-check.js';
import { EXPIRY_WARNING_DAYS } from '../../../core/src/tls/certificate-expiry.js';
import { answerClientError } from './client-error.js';
import type { HubTransport } from './hub-transport.js';

/** A certificate and key the server holds, read and checked together. */
interface ServingPair {
  cert: Buffer;
  key: Buffer;
  fingerprint: string;
  notAfter: Date;
}

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
  let pair: ServingPair | undefined;
  let server: HttpServer | HttpsServer;
  if (t.scheme === 'https') {
    pair = await readPair(t.certPath, t.keyPath).catch((err: unknown) => {
      throw new LookoutError('config_invalid', `the hub's TLS certificate: ${(err as Error).message}`, {
        details: { key: t.source === 'flags' ? '--tls-cert' : '--tls', cert: t.certPath, key_file: t.keyPath },
      });
    });
    if (pair.notAfter.getTime() < Date.now()) {
      throw new LookoutError('config_invalid', `the hub's TLS certificate ${t.certPath} expired on ${pair.notAfter.toISOString()}: renew it (lookout certs)`, {
        details: { key: '--tls-cert', cert: t.certPath },
      });
    }
    server = createHttpsServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2', handshakeTimeout: o.handshakeTimeoutMs ?? 10_000 }, o.handler);
  } else {
    server = createHttpServer(o.handler);
  }
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.on('clientError', answerClientError);
  await listen(server, o.port, o.host, { name: 'the hub', key: '--port' });
  const port = boundPort(server, o.port);

  const watchers: FSWatcher[] = [];
  let onHup: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const log = o.logger;

  const reload: HubServer['reload'] = async () => {
    if (t.scheme !== 'https' || !pair) return { ok: false, reason: 'the hub serves plain HTTP' };
    let next: ServingPair;
    try {
      next = await readPair(t.certPath, t.keyPath);
    } catch (err) {
      const reason = (err as Error).message;
      log.warn({ cert: t.certPath, serving: pair.fingerprint }, `TLS certificate not reloaded, the one served stays: ${reason}`);
      return { ok: false, reason };
    }
    if (next.fingerprint === pair.fingerprint) return { ok: true, fingerprint: next.fingerprint, changed: false };
    (server as HttpsServer).setSecureContext({ cert: next.cert, key: next.key, minVersion: 'TLSv1.2' });
    log.info(
      { cert: t.certPath, fingerprint: next.fingerprint, previous: pair.fingerprint, not_after: next.notAfter.toISOString() },
      'TLS certificate reloaded',
    );
    pair = next;
    warnIfExpiring(log, t.certPath, next);
    return { ok: true, fingerprint: next.fingerprint, changed: true };
  };

  if (t.scheme === 'https' && pair) {
    warnIfExpiring(log, t.certPath, pair);
    const names = new Set([basename(t.certPath), basename(t.keyPath)]);
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void reload(), o.reloadDebounceMs ?? 200);
      timer.unref();
    };
    for (const dir of o.watchFiles === false ? [] : new Set([dirname(t.certPath), dirname(t.keyPath)])) {
      const w = watch(dir, { persistent: false }, (_event, file) => {
        // Some platforms give no name: any change in the folder is then a reason to look.
        if (file === null || names.has(file.toString())) soon();
      });
      w.on('error', (err) => log.warn({ err, dir }, 'cannot watch the TLS certificate folder: reload with SIGHUP'));
      watchers.push(w);
    }
    if (o.reloadOnSighup ?? true) {
      onHup = () => void reload();
      process.on('SIGHUP', onHup);
    }
  }

  return {
    server,
    scheme: t.scheme,
    port,
    fingerprint: () => pair?.fingerprint,
    reload,
    async close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
      if (onHup) process.off('SIGHUP', onHup);
      await closeServer(server);
    },
  };
}

/** Reads the certificate and key and checks they belong together; rejects with what is wrong. */
async function readPair(certPath: string, keyPath: string): Promise<ServingPair> {
  const [cert, key] = await Promise.all([
    readFile(certPath).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`${certPath} cannot be read: ${err.code ?? err.message}`);
    }),
    readFile(keyPath).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`${keyPath} cannot be read: ${err.code ?? err.message}`);
    }),
  ]);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`${certPath} is not a PEM certificate: ${(err as Error).message}`);
  }
  if (!keyMatchesCertificate(cert, key)) throw new Error(`${keyPath} is not the private key of ${certPath}`);
  return { cert, key, fingerprint: x509.fingerprint256, notAfter: new Date(x509.validTo) };
}

function warnIfExpiring(log: Logger, certPath: string, pair: ServingPair): void {
  const days = Math.floor((pair.notAfter.getTime() - Date.now()) / 86_400_000);
  if (days < EXPIRY_WARNING_DAYS)
    log.warn(
      { cert: certPath, not_after: pair.notAfter.toISOString(), days_left: days },
      `the hub's TLS certificate expires in ${days} days: renew it (lookout certs)`,
    );
}
