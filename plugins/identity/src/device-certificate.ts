import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { writeFileAtomic, type Logger } from 'lookout/core';
import { createSelfSignedCertificate } from './self-signed-cert.js';

export interface DeviceCertificate {
  certPath: string;
  keyPath: string;
  /** SHA-256 of the certificate's DER in colon hex; null when there is no usable certificate. */
  fingerprint: string | null;
  generated: boolean;
  /** Why the fingerprint is null. */
  problem?: string;
}

/**
 * The device certificate (the peer-mesh TLS material of spec 02, `shadow_peer.crt` / `.key`).
 * A provisioned certificate is used as it is; a missing one is generated when allowed (first start
 * in development). The key is written before the certificate, mode 0600, and never read back here.
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
      return { ...base, fingerprint: cert.fingerprint256 };
    } catch (err) {
      const problem = `the certificate ${certPath} cannot be parsed: ${(err as Error).message}`;
      log.warn({ certPath }, problem);
      return { ...base, fingerprint: null, problem };
    }
  }
  if (!options.generate) {
    const problem = `no device certificate at ${certPath}`;
    log.warn({ certPath }, problem);
    return { certPath, keyPath, fingerprint: null, generated: false, problem };
  }
  const made = createSelfSignedCertificate({
    commonName: options.commonName,
    ...(options.dnsNames ? { dnsNames: options.dnsNames } : {}),
    ...(options.ips ? { ips: options.ips } : {}),
  });
  await writeFileAtomic(keyPath, made.keyPem, 0o600);
  await writeFileAtomic(certPath, made.certPem, 0o644);
  log.info({ certPath, fingerprint: made.fingerprint }, 'generated a self-signed device certificate');
  return { certPath, keyPath, fingerprint: made.fingerprint, generated: true };
}

async function warnOnLooseKey(keyPath: string, log: Logger): Promise<void> {
  try {
    const { mode } = await stat(keyPath);
    if ((mode & 0o077) !== 0) log.warn({ keyPath, mode: (mode & 0o777).toString(8) }, 'the device key is readable by others; it should be mode 0600');
  } catch {
    log.warn({ keyPath }, 'the device certificate has no key file beside it');
  }
}
