import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';

/** A certificate with less than this many days left is warned about (and renewed by `lookout certs`). */
export const EXPIRY_WARNING_DAYS = 30;

/** One certificate file's validity as an operator reads it. */
export interface CertificateExpiry {
  /** What the certificate is for: `fleet CA`, `hub-server`, a device id… */
  name: string;
  path: string;
  /** Null when the file could not be read or parsed (see problem). */
  notAfter: string | null;
  /** Whole days left, floored (negative once expired); null when unknown. */
  daysLeft: number | null;
  /** ok; expiring: fewer than EXPIRY_WARNING_DAYS days left; expired; missing; unreadable. */
  state: 'ok' | 'expiring' | 'expired' | 'missing' | 'unreadable';
  problem?: string;
}

/**
 * The validity of the certificate at `path`, read now. node:crypto only and synchronous (small
 * local files): the readiness plugin reads the hub's own certificates with it on every answer.
 */
export function certificateExpiry(name: string, path: string, now = new Date()): CertificateExpiry {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return {
      name,
      path,
      notAfter: null,
      daysLeft: null,
      state: missing ? 'missing' : 'unreadable',
      problem: missing ? 'no such file' : (err as Error).message,
    };
  }
  let notAfter: Date;
  try {
    notAfter = new Date(new X509Certificate(pem).validTo);
  } catch (err) {
    return { name, path, notAfter: null, daysLeft: null, state: 'unreadable', problem: `not a certificate: ${(err as Error).message}` };
  }
  const msLeft = notAfter.getTime() - now.getTime();
  const daysLeft = Math.floor(msLeft / 86_400_000);
  const state = msLeft < 0 ? 'expired' : msLeft < EXPIRY_WARNING_DAYS * 86_400_000 ? 'expiring' : 'ok';
  return { name, path, notAfter: notAfter.toISOString(), daysLeft, state };
}

/** One line for a certificate that needs the operator (expiring, expired, unreadable), or null when it is fine or absent. */
export function expiryWarning(e: CertificateExpiry): string | null {
  if (e.state === 'expiring') return `${e.name} certificate ${e.path} expires in ${e.daysLeft} days (${e.notAfter}): renew it with lookout certs`;
  if (e.state === 'expired') return `${e.name} certificate ${e.path} expired on ${e.notAfter}: renew it with lookout certs`;
  if (e.state === 'unreadable') return `${e.name} certificate ${e.path} cannot be read: ${e.problem}`;
  return null;
}
