import { createHmac, timingSafeEqual, createHash } from 'node:crypto';

/**
 * A device's own secret for one purpose (`mqtt`, `tools`), derived from the fleet secret the hub
 * holds: HMAC-SHA256(fleet secret, "<purpose>:<device id>"), base64url. The hub derives the same
 * value to check or send it, so no per-device secret is stored anywhere but on the device, and one
 * device's secret says nothing about another's.
 */
export function deriveDeviceSecret(fleetSecret: string, purpose: string, deviceId: string): string {
  return createHmac('sha256', fleetSecret).update(`${purpose}:${deviceId}`).digest('base64url');
}

/** Compares two secrets in constant time, whatever their lengths (digests first, so length does not leak). */
export function sameSecret(given: string | Buffer, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
