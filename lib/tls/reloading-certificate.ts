import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { EXPIRY_WARNING_DAYS } from './certificate-expiry.js';
import { readServedPair, type ServedPair } from './served-pair.js';

type CertificatePair = ServedPair;
/** What it logs with (pino's Logger fits). */
interface CertificateLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface ReloadingCertificateOptions {
  certPath: string;
  keyPath: string;
  /** Names the holder in log lines ("the broker", "the hub"). */
  what: string;
  log: CertificateLog;
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
 * A served certificate kept current (the hub's HTTPS one, its broker's): read again on SIGHUP and
 * when its files change (fs.watch on their folders, since `lookout certs` and most tools replace
 * files by rename), handed to `onChange` (which installs it with setSecureContext) only when the
 * new files are a fit pair; a pair that does not fit keeps the one served, and says why.
 */
export async function reloadingCertificate(o: ReloadingCertificateOptions): Promise<ReloadingCertificate> {
  let pair = await readServedPair(o.certPath, o.keyPath);
  warnIfExpiring(o, pair);
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let onHup: (() => void) | undefined;

  const reload: ReloadingCertificate['reload'] = async () => {
    let next: CertificatePair;
    try {
      next = await readServedPair(o.certPath, o.keyPath);
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

function warnIfExpiring(o: ReloadingCertificateOptions, pair: CertificatePair): void {
  const days = Math.floor((pair.notAfter.getTime() - Date.now()) / 86_400_000);
  if (days < EXPIRY_WARNING_DAYS) {
    o.log.warn(
      { cert: o.certPath, not_after: pair.notAfter.toISOString(), days_left: days },
      `${o.what}: the TLS certificate expires in ${days} days: renew it (lookout certs)`,
    );
  }
}
