import { X509Certificate } from 'node:crypto';
import { altNames, assertCommonName, subjectName } from './certificate-names.js';
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
  const subject = subjectName(request.commonName, 'Lookout');
  const names = altNames(request.dnsNames, request.ips);
  const keys = await generateP256();
  const { notBefore, notAfter } = validity(request.now ?? new Date(), request.days);
  const caNotAfter = ca.cert.notAfter;
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      subject,
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
  assertCommonName(cert, request.commonName);
  return { certPem, keyPem: await privateKeyPem(keys.privateKey), fingerprint: new X509Certificate(certPem).fingerprint256, notAfter: cert.notAfter };
}
