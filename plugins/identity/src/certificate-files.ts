import { writeFileAtomic } from 'lookout/core';

/** Where the device's TLS material lives (spec 02: /data/config/shadow_peer.crt and .key). */
export interface CertificatePaths {
  certPath: string;
  keyPath: string;
}

/** PEM text of a key and its certificate. */
export interface CertificateMaterial {
  keyPem: string;
  certPem: string;
}

/**
 * Writes the key (mode 0600), then the certificate, each atomically. The certificate goes last
 * because its presence is what says "provisioned" at the next start: a key written without its
 * certificate is simply generated again, never paired with a stranger.
 * A failure rejects with an Error naming the file and the cause (never the key's content).
 */
export async function saveCertificateFiles(paths: CertificatePaths, material: CertificateMaterial): Promise<void> {
  await writeOne(paths.keyPath, material.keyPem, 0o600);
  await writeOne(paths.certPath, material.certPem, 0o644);
}

async function writeOne(path: string, pem: string, mode: number): Promise<void> {
  try {
    await writeFileAtomic(path, pem, mode);
  } catch (err) {
    throw new Error(`cannot write ${path}: ${(err as Error).message}`, { cause: err });
  }
}
