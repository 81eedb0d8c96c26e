import { createPrivateKey, X509Certificate } from 'node:crypto';

/** What checking a certificate against the fleet CA found. */
export type CertificateCheck = { ok: true; fingerprint: string; subject: string; notAfter: Date } | { ok: false; reason: string; fingerprint?: string };

/**
 * Is `certPem` issued by the CA `caPem` and valid at `now`? The CA must be a CA certificate valid
 * now; the certificate must name it as issuer, carry its signature and be inside its own validity.
 * node:crypto only, synchronous: a sidecar calls it before it listens, the hub before it dials.
 */
export function checkIssuedBy(certPem: string | Buffer, caPem: string | Buffer, now = new Date()): CertificateCheck {
  let ca: X509Certificate;
  let cert: X509Certificate;
  try {
    ca = new X509Certificate(caPem);
  } catch (err) {
    return { ok: false, reason: `the CA certificate cannot be parsed: ${(err as Error).message}` };
  }
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    return { ok: false, reason: `the certificate cannot be parsed: ${(err as Error).message}` };
  }
  const fingerprint = cert.fingerprint256;
  if (!ca.ca) return { ok: false, fingerprint, reason: 'the CA file holds a certificate that is not a CA (basicConstraints CA:FALSE)' };
  const caWhen = outsideValidity(ca, now);
  if (caWhen) return { ok: false, fingerprint, reason: `the CA certificate is ${caWhen}` };
  // checkIssued compares names (and key identifiers); verify proves the CA's key signed it.
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) {
    return { ok: false, fingerprint, reason: `the certificate (issuer ${oneLine(cert.issuer)}) is not issued by this CA (${oneLine(ca.subject)})` };
  }
  const when = outsideValidity(cert, now);
  if (when) return { ok: false, fingerprint, reason: `the certificate is ${when}` };
  return { ok: true, fingerprint, subject: oneLine(cert.subject), notAfter: new Date(cert.validTo) };
}

/** Whether the private key in `keyPem` belongs to the certificate; false when either cannot be read. */
export function keyMatchesCertificate(certPem: string | Buffer, keyPem: string | Buffer): boolean {
  try {
    return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

/** The subject's common name (CN) unescaped, or null when it has none or several. */
export function commonNameOf(cert: X509Certificate): string | null {
  const cn: unknown = cert.toLegacyObject().subject.CN;
  return typeof cn === 'string' ? cn : null;
}

function outsideValidity(cert: X509Certificate, now: Date): string | null {
  if (now.getTime() < new Date(cert.validFrom).getTime()) return `not valid before ${new Date(cert.validFrom).toISOString()}`;
  if (now.getTime() > new Date(cert.validTo).getTime()) return `expired on ${new Date(cert.validTo).toISOString()}`;
  return null;
}

const oneLine = (dn: string) => dn.split('\n').join(', ');
