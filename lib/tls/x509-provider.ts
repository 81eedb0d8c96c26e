// @peculiar/x509 builds on tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * @peculiar/x509 and the WebCrypto it signs with. Every call passes node's WebCrypto explicitly
 * rather than setting the library's global provider, so nothing else in the process is affected.
 */
export { x509 };
export const crypto = webcrypto as unknown as Crypto;
/** ECDSA on P-256 with SHA-256: what every Lookout certificate and key uses. */
export const P256: EcKeyGenParams & EcdsaParams = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

export function generateP256(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(P256, true, ['sign', 'verify']);
}

/** A private key as PKCS#8 PEM, the form node:tls and openssl read. */
export async function privateKeyPem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

export async function importPrivateKeyPem(pem: string): Promise<CryptoKey> {
  const der = x509.PemConverter.decode(pem)[0];
  if (der === undefined) throw new Error('no PEM block');
  return crypto.subtle.importKey('pkcs8', der, P256, false, ['sign']);
}

/** A random positive serial number of 16 bytes, hex (RFC 5280 allows up to 20 octets). */
export function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] & 0x7f) | 0x01;
  return Buffer.from(bytes).toString('hex');
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** notBefore an hour early, so that a peer whose clock runs a little behind accepts a fresh certificate. */
export function validity(now: Date, days: number): { notBefore: Date; notAfter: Date } {
  return { notBefore: new Date(now.getTime() - 60 * 60 * 1000), notAfter: new Date(now.getTime() + days * DAY_MS) };
}
