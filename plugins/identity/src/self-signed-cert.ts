import { generateKeyPairSync, randomBytes, sign, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitString,
  boolean,
  explicit,
  implicitPrimitive,
  objectIdentifier,
  octetString,
  sequence,
  set,
  smallInteger,
  time,
  unsignedInteger,
  utf8String,
} from './der.js';

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
};

export interface SelfSignedCertificate {
  certPem: string;
  keyPem: string;
  /** SHA-256 of the certificate's DER, colon hex (`AB:CD:…`). */
  fingerprint: string;
}

/**
 * A self-signed X.509 v3 certificate on a fresh P-256 key, built in DER and signed with node:crypto
 * (no openssl binary needed, so the same code runs on a device image without it). It is its own
 * CA (basicConstraints CA:TRUE), so a peer can pin it as a trust anchor for mTLS; the SAN lists
 * the device id (when it is a DNS name) and the given addresses.
 */
export function createSelfSignedCertificate(options: {
  commonName: string;
  dnsNames?: string[];
  ips?: string[];
  days?: number;
  now?: Date;
}): SelfSignedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const now = options.now ?? new Date();
  const notBefore = new Date(now.getTime() - 60 * 60 * 1000); // an hour of slack for clocks behind
  const notAfter = new Date(now.getTime() + (options.days ?? 3650) * 24 * 60 * 60 * 1000);
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  const name = sequence(
    set(sequence(objectIdentifier(OID.organization), utf8String('Lookout device'))),
    set(sequence(objectIdentifier(OID.commonName), utf8String(options.commonName))),
  );
  const algorithm = sequence(objectIdentifier(OID.ecdsaWithSha256));
  const altNames = [
    ...(options.dnsNames ?? []).filter(isDnsName).map((d) => implicitPrimitive(2, Buffer.from(d, 'ascii'))),
    ...(options.ips ?? []).filter((ip) => isIP(ip) === 4).map((ip) => implicitPrimitive(7, Buffer.from(ip.split('.').map(Number)))),
  ];
  const extensions = [
    sequence(objectIdentifier(OID.basicConstraints), boolean(true), octetString(sequence(boolean(true)))),
    // digitalSignature (bit 0) and keyCertSign (bit 5): signs TLS handshakes and itself.
    sequence(objectIdentifier(OID.keyUsage), boolean(true), octetString(Buffer.from([0x03, 0x02, 0x02, 0x84]))),
    ...(altNames.length > 0 ? [sequence(objectIdentifier(OID.subjectAltName), octetString(sequence(...altNames)))] : []),
  ];
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serial),
    algorithm,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...extensions)),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, algorithm, bitString(signature));
  const certPem = toPem('CERTIFICATE', der);
  return {
    certPem,
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    fingerprint: new X509Certificate(der).fingerprint256,
  };
}

function toPem(label: string, der: Buffer): string {
  const body = der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function isDnsName(s: string): boolean {
  return /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(s);
}
