import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createSelfSignedCertificate } from 'lookout/lib/tls';
import type { Logger } from 'lookout/core';
import { saveCertificateFiles, type CertificateMaterial } from './certificate-files.js';

export interface DeviceCertificate {
  certPath: string;
  keyPath: string;
  /** SHA-256 of the certificate's DER in colon hex; null when there is no usable certificate. */
  fingerprint: string | null;
  /** When the certificate ends (ISO 8601), announced in hello so the hub's readiness warns ahead; null with no usable certificate. */
  notAfter: string | null;
  generated: boolean;
  /** Why the fingerprint is null. */
  problem?: string;
  /**
   * Generated material that could not be written (a full or read-only data filesystem): the device
   * runs on it from memory and the caller keeps trying to save it. Never logged.
   */
  unsaved?: CertificateMaterial & { reason: string };
}

/**
 * The device certificate (the peer-mesh TLS material of spec 02, `shadow_peer.crt` / `.key`).
 * A provisioned certificate is used as it is; a missing one is generated when allowed (first start
 * in development). The key is written before the certificate, mode 0600, and never read back here.
 * A generated pair that cannot be written does not stop the device (a camera with a full disk must
 * still connect and say so): it is returned as `unsaved`, in memory, for the caller to persist later.
 */
export async function ensureDeviceCertificate(options: {
  certPath: string;
  keyPath: string;
  generate: boolean;
  commonName: string;
  dnsNames?: string[];
  ips?: string[];
  log: Logger;
}): Promise<DeviceCertificate> {
  const { certPath, keyPath, log } = options;
  if (existsSync(certPath)) {
    const base = { certPath, keyPath, generated: false };
    try {
      const cert = new X509Certificate(await readFile(certPath));
      await warnOnLooseKey(keyPath, log);
      return { ...base, fingerprint: cert.fingerprint256, notAfter: notAfterOf(cert) };
    } catch (err) {
      const problem = `the certificate ${certPath} cannot be parsed: ${(err as Error).message}`;
      log.warn({ certPath }, problem);
      return { ...base, fingerprint: null, notAfter: null, problem };
    }
  }
  if (!options.generate) {
    const problem = `no device certificate at ${certPath}`;
    log.warn({ certPath }, problem);
    return { certPath, keyPath, fingerprint: null, notAfter: null, generated: false, problem };
  }
  const made = await createSelfSignedCertificate({
    commonName: options.commonName,
    ...(options.dnsNames ? { dnsNames: options.dnsNames } : {}),
    ...(options.ips ? { ips: options.ips } : {}),
  });
  const generated = { certPath, keyPath, fingerprint: made.fingerprint, notAfter: notAfterOf(new X509Certificate(made.certPem)), generated: true };
  try {
    await saveCertificateFiles({ certPath, keyPath }, made);
  } catch (err) {
    const reason = (err as Error).message;
    log.warn({ certPath, fingerprint: made.fingerprint }, `generated a self-signed device certificate, kept in memory only: ${reason}`);
    return { ...generated, unsaved: { keyPem: made.keyPem, certPem: made.certPem, reason } };
  }
  log.info({ certPath, fingerprint: made.fingerprint }, 'generated a self-signed device certificate');
  return generated;
}

/** The certificate's end as ISO 8601 (X509Certificate's validTo is a C-locale date string). */
export function notAfterOf(cert: X509Certificate): string {
  return new Date(cert.validTo).toISOString();
}

async function warnOnLooseKey(keyPath: string, log: Logger): Promise<void> {
  try {
    const { mode } = await stat(keyPath);
    if ((mode & 0o077) !== 0) log.warn({ keyPath, mode: (mode & 0o777).toString(8) }, 'the device key is readable by others; it should be mode 0600');
  } catch {
    log.warn({ keyPath }, 'the device certificate has no key file beside it');
  }
}
