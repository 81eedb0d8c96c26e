import { X509Certificate } from 'node:crypto';
import { rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { LookoutError, writeFileAtomic } from 'lookout/core';
import { readIfThere } from './read-if-there.js';
import { writeFileExclusive } from './exclusive-write.js';
import { looseModeOf, octalMode } from './key-file-mode.js';
import { keyMatchesCertificate } from './certificate-check.js';
import { crypto, generateP256, importPrivateKeyPem, P256, privateKeyPem, randomSerial, validity, x509 } from './x509-provider.js';

/** The fleet CA's files in its folder: the certificate every peer pins, and its key (mode 0600). */
export const CA_FILES = { cert: 'ca.crt', key: 'ca.key' } as const;
export const CA_COMMON_NAME = 'Lookout fleet CA';
export const CA_DAYS = 3650;

/** A fleet CA ready to issue certificates. Its key stays in memory as a non-extractable CryptoKey. */
export interface FleetCa {
  certPath: string;
  keyPath: string;
  certPem: string;
  /** SHA-256 of the CA certificate's DER, colon hex. */
  fingerprint: string;
  cert: x509.X509Certificate;
  signingKey: CryptoKey;
}

/**
 * The fleet CA in `caDir`: loaded when `ca.crt` and `ca.key` are there, created (key first, mode
 * 0600, then the certificate) when neither is. A CA is never replaced here: a half-present, broken,
 * expired or mismatched pair is refused with the reason, because a new CA would silently cut every
 * device certificate it issued off the fleet; so is a `ca.key` other users may read (like the fleet
 * secret). Creation is exclusive: of two runs on an empty folder one creates the CA and the other
 * loads it, never a key of one with the certificate of the other.
 */
export async function openFleetCa(caDir: string, options: { create?: boolean; now?: Date } = {}): Promise<{ ca: FleetCa; created: boolean }> {
  const certPath = join(resolve(caDir), CA_FILES.cert);
  const keyPath = join(resolve(caDir), CA_FILES.key);
  const now = options.now ?? new Date();
  let [certPem, keyPem] = await Promise.all([readIfThere(certPath), readIfThere(keyPath)]);
  if (certPem === undefined && keyPem === undefined) {
    if (options.create === false) throw refused(`no fleet CA in ${caDir} (${CA_FILES.cert} and ${CA_FILES.key})`, caDir);
    const ca = await createFleetCa(certPath, keyPath, now);
    if (ca) return { ca, created: true };
  }
  // A key without its certificate may be a creation under way: another run's, that this one lost to
  // just now or found between its key and its certificate. Its CA is the one, once the certificate is there.
  if (certPem === undefined) [certPem, keyPem] = await certificateOfNewKey(certPath, keyPath);
  if (certPem === undefined) throw refused(`${keyPath} exists without ${CA_FILES.cert}: move it away or restore the certificate`, caDir);
  if (keyPem === undefined) throw refused(`${certPath} exists without ${CA_FILES.key}: this folder cannot issue certificates`, caDir);
  const loose = await looseModeOf(keyPath);
  if (loose !== null) {
    throw refused(`${keyPath} is open to other users (mode ${octalMode(loose)}): chmod 600 it (it signs every certificate of the fleet)`, keyPath);
  }
  return { ca: await loadFleetCa(certPath, keyPath, certPem, keyPem, now), created: false };
}

/** How long a key without its certificate may be a creation under way (the key is written, the certificate follows). */
const CREATION_WINDOW_MS = 3000;
const CREATION_POLL_MS = 25;

/**
 * The certificate (and the key, read again) of a `ca.key` found without `ca.crt`: a run creating
 * the CA writes its key, then its certificate, so a key younger than the creation window is waited
 * for; an older one is a leftover and comes back without a certificate (refused by the caller).
 */
async function certificateOfNewKey(certPath: string, keyPath: string): Promise<[string | undefined, string | undefined]> {
  const keyWritten = (await stat(keyPath).catch(() => undefined))?.mtimeMs ?? 0;
  for (;;) {
    const certPem = await readIfThere(certPath);
    // Read after the certificate: the creator closed the key before it wrote the certificate.
    if (certPem !== undefined) return [certPem, await readIfThere(keyPath)];
    if (Date.now() - keyWritten > CREATION_WINDOW_MS) return [undefined, await readIfThere(keyPath)];
    await delay(CREATION_POLL_MS);
  }
}

/** Creates the CA, or returns null when another run created `ca.key` first (this run then loads that CA). */
async function createFleetCa(certPath: string, keyPath: string, now: Date): Promise<FleetCa | null> {
  const keys = await generateP256();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerial(),
      name: `CN=${CA_COMMON_NAME}, O=Lookout`,
      ...validity(now, CA_DAYS),
      keys,
      signingAlgorithm: P256,
      extensions: [
        // pathlen 0: it signs device and hub certificates only, never another CA.
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  const certPem = cert.toString('pem');
  // The key is the claim: created exclusively, so a second run on the same folder learns it lost.
  if (!(await writeFileExclusive(keyPath, await privateKeyPem(keys.privateKey), 0o600))) return null;
  try {
    await writeFileAtomic(certPath, certPem, 0o644);
  } catch (err) {
    // Nothing was issued under this key yet: take it back rather than leave a key without its certificate.
    await rm(keyPath, { force: true }).catch(() => undefined);
    throw err;
  }
  return { certPath, keyPath, certPem, fingerprint: new X509Certificate(certPem).fingerprint256, cert, signingKey: keys.privateKey };
}

async function loadFleetCa(certPath: string, keyPath: string, certPem: string, keyPem: string, now: Date): Promise<FleetCa> {
  let node: X509Certificate;
  try {
    node = new X509Certificate(certPem);
  } catch (err) {
    throw refused(`${certPath} cannot be parsed: ${(err as Error).message}`, certPath);
  }
  if (!node.ca) throw refused(`${certPath} is not a CA certificate (basicConstraints CA:FALSE)`, certPath);
  if (now.getTime() > new Date(node.validTo).getTime()) throw refused(`the fleet CA ${certPath} expired on ${new Date(node.validTo).toISOString()}`, certPath);
  if (!keyMatchesCertificate(certPem, keyPem)) throw refused(`${keyPath} is not the key of ${certPath}`, keyPath);
  let signingKey: CryptoKey;
  try {
    signingKey = await importPrivateKeyPem(keyPem);
  } catch (err) {
    throw refused(`${keyPath} is not a P-256 private key: ${(err as Error).message}`, keyPath);
  }
  return { certPath, keyPath, certPem, fingerprint: node.fingerprint256, cert: new x509.X509Certificate(certPem), signingKey };
}

function refused(message: string, path: string): LookoutError {
  return new LookoutError('argument_invalid', message, { details: { path } });
}
