import { X509Certificate } from 'node:crypto';
import { altNames, assertCommonName, subjectName } from './certificate-names.js';
import { crypto, generateP256, P256, privateKeyPem, randomSerial, validity, x509 } from './x509-provider.js';

export interface SelfSignedCertificate {
  certPem: string;
  keyPem: string;
  /** SHA-256 of the certificate's DER, colon hex. */
  fingerprint: string;
}

/** What a self-signed certificate names and how long it lasts. */
export interface SelfSignedRequest {
  commonName: string;
  dnsNames?: string[];
  ips?: string[];
  days?: number;
  now?: Date;
}

/**
 * A self-signed certificate on a fresh P-256 key, for a device that was not provisioned by the
 * fleet CA (development): its own CA (CA:TRUE, pathlen 0), so that a peer can pin it as a trust
 * anchor; SAN = the DNS names that are valid ones and the IP addresses. Load it through
 * `createSelfSignedCertificate` (self-signed-lazy.ts), which imports @peculiar/x509 only when called.
 */
export async function selfSignedCertificate(options: SelfSignedRequest): Promise<SelfSignedCertificate> {
  const name = subjectName(options.commonName, 'Lookout device');
  const names = altNames(options.dnsNames, options.ips);
  const keys = await generateP256();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerial(),
      name,
      ...validity(options.now ?? new Date(), options.days ?? 3650),
      keys,
      signingAlgorithm: P256,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        // digitalSignature signs TLS handshakes, keyCertSign the certificate itself.
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign, true),
        ...(names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  assertCommonName(cert, options.commonName);
  const certPem = cert.toString('pem');
  return { certPem, keyPem: await privateKeyPem(keys.privateKey), fingerprint: new X509Certificate(certPem).fingerprint256 };
}
