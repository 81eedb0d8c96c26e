import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { basename, dirname } from 'node:path';
import type { BusLogger } from '../../../core/src/bus/bus-logger.js';
import { keyMatchesCertificate } from '../../../core/src/tls/certificate-check.js';
import { EXPIRY_WARNING_DAYS } from '../../../core/src/tls/certificate-expiry.js';

/** A certificate and key read and checked together. */
export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
  fingerprint: string;
  notAfter: Date;
}

export interface ReloadingCertificateOptions {
  certPath: string;
  keyPath: string;
  /** Names the holder in log lines ("the broker"). */
  what: string;
  log: BusLogger;
  /** Called with each new pair (not with the first): the server installs it with setSecureContext. */
  onChange: (pair: CertificatePair) => void;
  /** Quiet period after a change to the files before they are read (writers replace the key, then the certificate). Default 200 ms. */
  debounceMs?: number;
  /** Reload when the certificate or key file changes (default true). */
  watchFiles?: boolean;
  /** Reload on SIGHUP (default true). */
  reloadOnSighup?: boolean;
}

export interface ReloadingCertificate {
  current(): CertificatePair;
  /** Reads the files again; keeps the current pair when they are not a fit pair (and says why). */
  reload(): Promise<{ ok: true; fingerprint: string; changed: boolean } | { ok: false; reason: string }>;
  close(): void;
}

/**
 * A served certificate kept current as the hub's HTTPS one is (hub/src/http/tls-server.ts): read
 * again on SIGHUP and when its files change (fs.watch on their folders, since `lookout certs` and
 * most tools replace files by rename), installed only when the new files are a fit pair.
 */
export async function reloadingCertificate(o: ReloadingCertificateOptions): Promise<ReloadingCertificate> {
  let pair = await readCertificatePair(o.certPath, o.keyPath);
  warnIfExpiring(o, pair);
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let onHup: (() => void) | undefined;

  const reload: ReloadingCertificate['reload'] = async () => {
    let next: CertificatePair;
    try {
      next = await readCertificatePair(o.certPath, o.keyPath);
    } catch (err) {
      const reason = (err as Error).message;
      o.log.warn({ cert: o.certPath, serving: pair.fingerprint }, `${o.what}: TLS certificate not reloaded, the one served stays: ${reason}`);
      return { ok: false, reason };
    }
    if (next.fingerprint === pair.fingerprint) return { ok: true, fingerprint: next.fingerprint, changed: false };
    o.onChange(next);
    o.log.info(
      { cert: o.certPath, fingerprint: next.fingerprint, previous: pair.fingerprint, not_after: next.notAfter.toISOString() },
      `${o.what}: TLS certificate reloaded`,
    );
    pair = next;
    warnIfExpiring(o, next);
    return { ok: true, fingerprint: next.fingerprint, changed: true };
  };

  const names = new Set([basename(o.certPath), basename(o.keyPath)]);
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void reload(), o.debounceMs ?? 200);
    timer.unref();
  };
  for (const dir of o.watchFiles === false ? [] : new Set([dirname(o.certPath), dirname(o.keyPath)])) {
    const w = watch(dir, { persistent: false }, (_event, file) => {
      // Some platforms give no name: any change in the folder is then a reason to look.
      if (file === null || names.has(file.toString())) soon();
    });
    w.on('error', (err) => o.log.warn({ err: err.message, dir }, `${o.what}: cannot watch the TLS certificate folder: reload with SIGHUP`));
    watchers.push(w);
  }
  if (o.reloadOnSighup ?? true) {
    onHup = () => void reload();
    process.on('SIGHUP', onHup);
  }
  return {
    current: () => pair,
    reload,
    close() {
      clearTimeout(timer);
      for (const w of watchers) w.close();
      if (onHup) process.off('SIGHUP', onHup);
    },
  };
}

/** Reads the certificate and key and checks they belong together; rejects with what is wrong. */
export async function readCertificatePair(certPath: string, keyPath: string): Promise<CertificatePair> {
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

function warnIfExpiring(o: ReloadingCertificateOptions, pair: CertificatePair): void {
  const days = Math.floor((pair.notAfter.getTime() - Date.now()) / 86_400_000);
  if (days < EXPIRY_WARNING_DAYS) {
    o.log.warn(
      { cert: o.certPath, not_after: pair.notAfter.toISOString(), days_left: days },
      `${o.what}: the TLS certificate expires in ${days} days: renew it (lookout certs)`,
    );
  }
}
