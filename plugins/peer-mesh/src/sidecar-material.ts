import { X509Certificate } from 'node:crypto';
import { checkIssuedBy, keyMatchesCertificate } from 'lookout/lib/tls';
import { readFile } from 'node:fs/promises';

/** What the sidecar serves with: the device's certificate and key, and the one CA its clients must come from. */
export interface SidecarMaterial {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
  caFingerprint: string;
}

export type MaterialCheck = { ok: true; material: SidecarMaterial } | { ok: false; problem: string; caFingerprint: string | null };

async function read(path: string): Promise<Buffer | NodeJS.ErrnoException> {
  try {
    return await readFile(path);
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
}

const missing = (what: string, path: string, err: NodeJS.ErrnoException, hint: string) =>
  err.code === 'ENOENT' ? `no ${what} at ${path} (${hint})` : `the ${what} ${path} cannot be read (${err.code ?? err.message})`;

/**
 * Reads and checks the sidecar's material before it listens: a fleet CA that is a CA, and a device
 * certificate it issued, in date, matching the key. Each refusal says what is wrong and where, so the
 * status shows why the sidecar does not serve instead of every client failing its handshake.
 */
export async function checkSidecarMaterial(paths: { caPath: string; certPath: string; keyPath: string }, now = new Date()): Promise<MaterialCheck> {
  const { caPath, certPath, keyPath } = paths;
  const caPem = await read(caPath);
  if (!Buffer.isBuffer(caPem)) return { ok: false, problem: missing('fleet CA certificate', caPath, caPem, '`lookout certs` writes it'), caFingerprint: null };
  let caFingerprint: string | null = null;
  try {
    caFingerprint = new X509Certificate(caPem).fingerprint256;
  } catch (err) {
    return { ok: false, problem: `the fleet CA ${caPath} is not a PEM certificate: ${(err as Error).message}`, caFingerprint: null };
  }
  const refuse = (problem: string): MaterialCheck => ({ ok: false, problem, caFingerprint });
  const certPem = await read(certPath);
  if (!Buffer.isBuffer(certPem)) return refuse(missing('device certificate', certPath, certPem, '`lookout certs --device <id>` issues it'));
  const keyPem = await read(keyPath);
  if (!Buffer.isBuffer(keyPem)) return refuse(missing('device key', keyPath, keyPem, '`lookout certs --device <id>` writes it'));
  const check = checkIssuedBy(certPem, caPem, now);
  if (!check.ok) return refuse(`the device certificate ${certPath} does not fit the fleet CA ${caPath}: ${check.reason}`);
  if (!keyMatchesCertificate(certPem, keyPem))
    return refuse(`the device key ${keyPath} does not belong to the certificate ${certPath} (or is not a usable key)`);
  return { ok: true, material: { ca: caPem, cert: certPem, key: keyPem, caFingerprint } };
}
