import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AgentOptions } from 'node:https';
import { LookoutError } from 'lookout/core';
import type { PeerCertificate } from 'node:tls';

/** What a device's TLS certificate must be: issued by the fleet CA, naming the device, with the fingerprint it announced. */
export interface DevicePin {
  deviceId: string;
  /** SHA-256 colon hex as the device's hello (identity plugin) announced and the registry holds; null: it announced none. */
  fingerprint: string | null;
}

/** Why a device's certificate was refused. */
export type DeviceTlsRefusal = 'untrusted_ca' | 'name_mismatch' | 'fingerprint_mismatch' | 'no_fingerprint';

/** A device's certificate refused: the handshake's error (its own or OpenSSL's verification error as cause). */
export class DeviceTlsMismatchError extends Error {
  override readonly name = 'DeviceTlsMismatchError';
  constructor(
    message: string,
    readonly reason: DeviceTlsRefusal,
    /** The fingerprint of the certificate presented, when the handshake got that far. */
    readonly presented?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** OpenSSL's certificate verification codes: a certificate the fleet CA does not vouch for (another CA, self-signed, expired). */
const VERIFY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'INVALID_PURPOSE',
]);

/**
 * The device's certificate as the hub must find it, after OpenSSL verified it against the fleet CA:
 * its CN or a DNS SAN names the device id (the address is the registry's, the certificate is what
 * proves who answers), and its SHA-256 equals the fingerprint the device announced (pinned: a
 * certificate swapped on the device, even one of the same CA, is refused until the device announces
 * it). Returns the refusal, undefined when it fits.
 */
export function checkDeviceCertificate(pin: DevicePin, cert: PeerCertificate): DeviceTlsMismatchError | undefined {
  const presented = cert.fingerprint256;
  const sans = (cert.subjectaltname ?? '').split(', ').filter((n) => n.startsWith('DNS:'));
  const named = cert.subject?.CN === pin.deviceId || sans.includes(`DNS:${pin.deviceId}`);
  if (!named) {
    return new DeviceTlsMismatchError(
      `the certificate presented names ${JSON.stringify(cert.subject?.CN ?? null)}, not ${pin.deviceId}`,
      'name_mismatch',
      presented,
    );
  }
  if (pin.fingerprint === null) {
    return new DeviceTlsMismatchError(`${pin.deviceId} announced no certificate fingerprint to pin`, 'no_fingerprint', presented);
  }
  if (!sameFingerprint(presented, pin.fingerprint)) {
    return new DeviceTlsMismatchError(
      `the certificate presented (${presented}) is not the one ${pin.deviceId} announced (${pin.fingerprint})`,
      'fingerprint_mismatch',
      presented,
    );
  }
  return undefined;
}

/** TLS options for an https agent dialling one device: only the fleet CA trusted, and the device's certificate pinned. */
export function deviceTlsOptions(ca: Buffer | string, pin: DevicePin): AgentOptions {
  return {
    ca,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
    checkServerIdentity: (_host: string, cert: PeerCertificate) => checkDeviceCertificate(pin, cert),
  };
}

/**
 * TLS options for dialling devices with the fleet CA in `caPath` (the hub's `<data>/tls/fleet_ca.crt`,
 * what `lookout certs --hub-data` writes), read at each call: callers ask when they make a device's
 * agent (rarely, agents are kept), so a CA put in place while the hub runs serves the next agent.
 * Without it no device can be verified: device_unreachable naming the file.
 */
export function fleetCaDeviceTls(caPath: string): (pin: DevicePin) => AgentOptions {
  return (pin) => {
    let ca: Buffer;
    try {
      ca = readFileSync(caPath);
    } catch (err) {
      throw new LookoutError(
        'device_unreachable',
        `${pin.deviceId} serves over TLS and the hub has no fleet CA to verify it (${caPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); run lookout certs --hub-data`,
        { details: { device_id: pin.deviceId, reason: 'no_fleet_ca', ca: caPath } },
      );
    }
    return deviceTlsOptions(ca, pin);
  };
}

/** The refusal in an error's cause chain (a connection error wrapping the handshake's), as a DeviceTlsMismatchError; undefined when it is none. */
export function deviceTlsRefusalOf(err: unknown): DeviceTlsMismatchError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DeviceTlsMismatchError) return e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== undefined && VERIFY_CODES.has(code)) {
      return new DeviceTlsMismatchError(`the device's certificate is not one the fleet CA issued: ${code}`, 'untrusted_ca', undefined, { cause: e });
    }
  }
  return undefined;
}

function sameFingerprint(a: string, b: string): boolean {
  const x = Buffer.from(a.toUpperCase());
  const y = Buffer.from(b.toUpperCase());
  return x.length === y.length && timingSafeEqual(x, y);
}
