import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Server as TlsServer } from 'node:tls';
import { LookoutError, type Logger } from 'lookout/core';
import { keyMatchesCertificate } from './certificate-check.js';

/** A certificate and key a server holds (the hub, its broker, a device's tool server or live stream), read and checked together. */
export interface ServedPair {
  cert: Buffer;
  key: Buffer;
  fingerprint: string;
  notAfter: Date;
}

export const SERVED_TLS_CONTEXT = { minVersion: 'TLSv1.2' } as const;

/** Reads the certificate and key and checks that they belong together; rejects naming the file and what is wrong. */
export async function readServedPair(certPath: string, keyPath: string): Promise<ServedPair> {
  const read = (path: string) =>
    readFile(path).catch((err: NodeJS.ErrnoException) => {
      throw new Error(`${path} cannot be read: ${err.code ?? err.message}`);
    });
  const [cert, key] = await Promise.all([read(certPath), read(keyPath)]);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`${certPath} is not a PEM certificate: ${(err as Error).message}`);
  }
  if (!keyMatchesCertificate(cert, key)) throw new Error(`${keyPath} is not the private key of ${certPath}`);
  return { cert, key, fingerprint: x509.fingerprint256, notAfter: new Date(x509.validTo) };
}

/**
 * The pair at start: a missing or unfit one refuses the start (config_invalid naming the files).
 * `surface` names the server in the message (`the tool server`), `key` the setting that asked for TLS.
 */
export async function servedPairAtStart(certPath: string, keyPath: string, surface = 'the tool server', key = '--tool-host'): Promise<ServedPair> {
  try {
    return await readServedPair(certPath, keyPath);
  } catch (err) {
    throw new LookoutError('config_invalid', `${surface}'s TLS certificate: ${(err as Error).message}`, {
      details: { key, reason: 'tls_required', cert: certPath },
    });
  }
}

/**
 * Serves a renewed device certificate without a restart and without dropping connections
 * (tls.Server#setSecureContext: open connections keep theirs, new ones get the new one). The identity
 * plugin announces no renewal event (a certificate is provisioned by `lookout certs` on disk), so the
 * operator's SIGHUP after renewing is the signal. A pair that does not fit keeps the one served.
 */
export function reloadOnSighup(
  /** An HTTPS or TLS server, or any server that serves a context it is given (the RTSPS listener). */
  server: Pick<TlsServer, 'setSecureContext'>,
  paths: { certPath: string; keyPath: string },
  first: ServedPair,
  log: Pick<Logger, 'info' | 'warn'>,
  surface = 'tool server',
): () => void {
  let served = first;
  const reload = async (): Promise<void> => {
    let next: ServedPair;
    try {
      next = await readServedPair(paths.certPath, paths.keyPath);
    } catch (err) {
      log.warn(
        { cert: paths.certPath, serving: served.fingerprint },
        `${surface} TLS certificate not reloaded, the one served stays: ${(err as Error).message}`,
      );
      return;
    }
    if (next.fingerprint === served.fingerprint) return;
    server.setSecureContext({ cert: next.cert, key: next.key, ...SERVED_TLS_CONTEXT });
    log.info({ cert: paths.certPath, fingerprint: next.fingerprint, previous: served.fingerprint }, `${surface} TLS certificate reloaded`);
    served = next;
  };
  const onHup = (): void => void reload();
  process.on('SIGHUP', onHup);
  return () => process.off('SIGHUP', onHup);
}
