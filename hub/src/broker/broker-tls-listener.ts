import { readFile } from 'node:fs/promises';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import type { BusLogger } from 'lookout/lib/mqtt';
import { LookoutError } from 'lookout/core';
import { reloadingCertificate, type ReloadingCertificate } from 'lookout/lib/tls';

/** The embedded broker's MQTT-over-TLS listener (8883 by default in the hub). */
export interface BrokerTlsListenerOptions {
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** PEM certificate (chain) the broker serves, and its key: read again on SIGHUP and when the files change. */
  certPath: string;
  keyPath: string;
  /**
   * The fleet CA: the listener asks each client for a certificate (not requiring one); one it signed
   * names its client (its CN, a device id) and may stand in for the password. A client presenting a
   * certificate of any other CA is refused at its CONNECT (not authorized), so that it hears why.
   */
  clientCaPath?: string;
  /** From accept to a finished handshake (default 10 s): a socket still without one is closed. */
  handshakeTimeoutMs?: number;
  /** Reload when the certificate or key file changes (default true). */
  watchFiles?: boolean;
  /** Reload on SIGHUP (default true). */
  reloadOnSighup?: boolean;
  /** Quiet period after a change to the files before they are read. Default 200 ms. */
  reloadDebounceMs?: number;
}

const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * A TLS server whose sockets, once the handshake is done, go to `onSecure` (the broker's guarded
 * aedes handle, as plain sockets do). Node closes a socket whose handshake is not over within
 * handshakeTimeout (a stranger holds a slot no longer); the served certificate is replaced on
 * reload with setSecureContext: open connections keep theirs, new ones get the new one.
 */
export async function createBrokerTlsServer(
  o: BrokerTlsListenerOptions,
  log: BusLogger,
  onSecure: (socket: TLSSocket) => void,
): Promise<{ server: TlsServer; certificate: ReloadingCertificate }> {
  const handshakeTimeout = o.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  if (!Number.isInteger(handshakeTimeout) || handshakeTimeout < 1) {
    throw new LookoutError('config_invalid', `broker handshakeTimeoutMs must be a positive integer, got ${String(handshakeTimeout)}`, {
      details: { key: 'handshakeTimeoutMs' },
    });
  }
  const ca = o.clientCaPath === undefined ? undefined : await readClientCa(o.clientCaPath);
  const clientCerts = ca ? { ca, requestCert: true, rejectUnauthorized: false } : {};
  // Made once the certificate is read; a reload reaches it through here.
  const made: { server?: TlsServer } = {};
  const certificate = await reloadingCertificate({
    certPath: o.certPath,
    keyPath: o.keyPath,
    what: 'the embedded broker',
    log,
    onChange: (pair) => made.server?.setSecureContext({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2', ...(ca ? { ca } : {}) }),
    ...(o.reloadDebounceMs !== undefined ? { debounceMs: o.reloadDebounceMs } : {}),
    ...(o.watchFiles !== undefined ? { watchFiles: o.watchFiles } : {}),
    ...(o.reloadOnSighup !== undefined ? { reloadOnSighup: o.reloadOnSighup } : {}),
  }).catch((err: unknown) => {
    throw new LookoutError('config_invalid', `the broker's TLS certificate: ${(err as Error).message}`, {
      details: { key: '--broker-tls-cert', cert: o.certPath, key_file: o.keyPath },
    });
  });
  const pair = certificate.current();
  if (pair.notAfter.getTime() < Date.now()) {
    certificate.close();
    throw new LookoutError('config_invalid', `the broker's TLS certificate ${o.certPath} expired on ${pair.notAfter.toISOString()}: renew it (lookout certs)`, {
      details: { key: '--broker-tls-cert', cert: o.certPath },
    });
  }
  const server = (made.server = createTlsServer({ cert: pair.cert, key: pair.key, minVersion: 'TLSv1.2', handshakeTimeout, ...clientCerts }, onSecure));
  // A failed or timed-out handshake: with a listener here Node leaves the socket open (a silent
  // stranger would keep it past the deadline), so it is closed here. A scan or a misconfigured device: logged quietly.
  server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
    socket.destroy();
    log.debug({ remote: socket.remoteAddress, code: err.code, err: err.message }, 'broker TLS handshake failed');
  });
  return { server, certificate };
}

/** What a client's certificate says about it: nothing (none presented), the identity a verified one names, or why it did not verify. */
export type CertificateIdentity = { id: string } | { refused: string } | undefined;

export function certificateIdentity(socket: TLSSocket): CertificateIdentity {
  const cert = socket.getPeerCertificate();
  if (Object.keys(cert).length === 0) return undefined;
  if (!socket.authorized) return { refused: socket.authorizationError?.message ?? String(socket.authorizationError) };
  const cn = cert.subject?.CN;
  return typeof cn === 'string' && cn !== '' ? { id: cn } : { refused: 'the certificate names no CN' };
}

async function readClientCa(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new LookoutError('config_invalid', `the fleet CA ${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, {
      details: { key: 'clientCaPath', path },
    });
  }
}
