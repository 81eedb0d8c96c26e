import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { LookoutError } from '../errors/lookout-error.js';
import type { FleetCa } from './fleet-ca.js';
import { crypto, generateP256, P256, privateKeyPem, randomSerial, validity, x509 } from './x509-provider.js';

export type CertificateUsage = 'serverAuth' | 'clientAuth';

export interface CertificateRequest {
  commonName: string;
  /** DNS names for the SAN; names that are not valid DNS names are left out (the CN still carries them). */
  dnsNames?: string[];
  /** IPv4 or IPv6 addresses for the SAN. */
  ips?: string[];
  usages: CertificateUsage[];
  days: number;
  now?: Date;
}

/** A fresh key and its certificate, PEM. */
export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
  /** SHA-256 of the certificate's DER, colon hex. */
  fingerprint: string;
  notAfter: Date;
}

const EKU = { serverAuth: x509.ExtendedKeyUsage.serverAuth, clientAuth: x509.ExtendedKeyUsage.clientAuth } as const;

/** Issues an end-entity certificate (CA:FALSE) on a new P-256 key, signed by the fleet CA. */
export async function issueCertificate(ca: FleetCa, request: CertificateRequest): Promise<IssuedCertificate> {
  // eslint-disable-next-line no-control-regex -- control characters are what the check refuses
  if (request.commonName.length === 0 || request.commonName.length > 64 || /[\u0000-\u001f\u007f]/.test(request.commonName)) {
    throw new LookoutError('argument_invalid', `a certificate's common name must be 1 to 64 printable characters: ${JSON.stringify(request.commonName)}`);
  }
  for (const ip of request.ips ?? []) {
    if (isIP(ip) === 0) throw new LookoutError('argument_invalid', `"${ip}" is not an IP address`, { details: { ip } });
  }
  const keys = await generateP256();
  const names = [
    ...(request.dnsNames ?? []).filter(isDnsName).map((value) => ({ type: 'dns' as const, value })),
    ...(request.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const { notBefore, notAfter } = validity(request.now ?? new Date(), request.days);
  const caNotAfter = ca.cert.notAfter;
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      // An escaped DN string: the library's JSON form mangles values holding quotes or backslashes.
      subject: `CN=${escapeDnValue(request.commonName)}, O=Lookout`,
      issuer: ca.cert.subjectName,
      notBefore,
      // Never past the CA: a certificate outliving its issuer would fail validation anyway.
      notAfter: notAfter > caNotAfter ? caNotAfter : notAfter,
      publicKey: keys.publicKey,
      signingKey: ca.signingKey,
      signingAlgorithm: P256,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension(
          request.usages.map((u) => EKU[u]),
          false,
        ),
        ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
        await x509.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey, false, crypto),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const certPem = cert.toString('pem');
  if (cert.subjectName.getField('CN')[0] !== request.commonName) {
    throw new LookoutError('argument_invalid', `the common name ${JSON.stringify(request.commonName)} cannot be written into a certificate as it is`);
  }
  return { certPem, keyPem: await privateKeyPem(keys.privateKey), fingerprint: new X509Certificate(certPem).fingerprint256, notAfter: cert.notAfter };
}

/** RFC 4514 escaping of one attribute value. */
function escapeDnValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^([ #])/, '\\$1')
    .replace(/ $/, '\\ ');
}

export function isDnsName(s: string): boolean {
  return /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(s);
}
