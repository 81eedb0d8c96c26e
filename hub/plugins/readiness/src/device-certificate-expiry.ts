import { EXPIRY_WARNING_DAYS } from 'lookout/lib/tls';
import type { DeviceFacts } from './device-facts.js';

const DAY_MS = 86_400_000;

/** A device certificate's end as its hello announced it, judged at the check's time. */
export interface DeviceCertificateEnd {
  notAfter: string;
  /** Whole days left, floored; negative once ended. */
  daysLeft: number;
  /** expiring: fewer than EXPIRY_WARNING_DAYS (30) days left; expired: ended (its TLS surfaces are refused). */
  state: 'ok' | 'expiring' | 'expired';
}

/**
 * The end of the device's certificate (its hello's `cert_not_after`, kept by the registry) at the
 * check's time; null when the device announced none (one from before the field) or an unreadable one.
 */
export function deviceCertificateEnd(facts: DeviceFacts): DeviceCertificateEnd | null {
  const notAfter = facts.registered?.certNotAfter;
  if (notAfter === undefined || notAfter === null) return null;
  const end = Date.parse(notAfter);
  if (Number.isNaN(end)) return null;
  const msLeft = end - facts.at;
  const state = msLeft < 0 ? 'expired' : msLeft < EXPIRY_WARNING_DAYS * DAY_MS ? 'expiring' : 'ok';
  return { notAfter: new Date(end).toISOString(), daysLeft: Math.floor(msLeft / DAY_MS), state };
}

/** The operator's line for a device certificate that ends soon or has ended; null when it is fine or unknown. */
export function deviceCertificateWarning(deviceId: string, end: DeviceCertificateEnd | null): string | null {
  if (end?.state === 'expiring') return `${deviceId} device certificate expires in ${end.daysLeft} days (${end.notAfter}): renew it with lookout certs`;
  if (end?.state === 'expired') return `${deviceId} device certificate expired on ${end.notAfter}: its TLS surfaces are refused; renew it with lookout certs`;
  return null;
}
