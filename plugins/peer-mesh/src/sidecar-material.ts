import { X509Certificate, createPrivateKey } from 'node:crypto';
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
  let ca: X509Certificate;
  try {
    ca = new X509Certificate(caPem);
  } catch (err) {
    return { ok: false, problem: `the fleet CA ${caPath} is not a PEM certificate: ${(err as Error).message}`, caFingerprint: null };
  }
  const caFingerprint = ca.fingerprint256;
  const refuse = (problem: string): MaterialCheck => ({ ok: false, problem, caFingerprint });
  if (!ca.ca) return refuse(`the fleet CA ${caPath} is not a CA certificate (basicConstraints CA:FALSE)`);
  const certPem = await read(certPath);
  if (!Buffer.isBuffer(certPem)) return refuse(missing('device certificate', certPath, certPem, '`lookout certs --device <id>` issues it'));
  const keyPem = await read(keyPath);
  if (!Buffer.isBuffer(keyPem)) return refuse(missing('device key', keyPath, keyPem, '`lookout certs --device <id>` writes it'));
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    return refuse(`the device certificate ${certPath} is not a PEM certificate: ${(err as Error).message}`);
  }
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) {
    return refuse(`the device certificate ${certPath} is not issued by the fleet CA ${caPath} (its issuer: ${cert.issuer.replace(/\n/g, ', ')})`);
  }
  if (now < new Date(cert.validFrom) || now > new Date(cert.validTo)) {
    return refuse(`the device certificate ${certPath} is not valid now (valid ${cert.validFrom} to ${cert.validTo})`);
  }
  try {
    if (!cert.checkPrivateKey(createPrivateKey(keyPem))) return refuse(`the device key ${keyPath} does not belong to the certificate ${certPath}`);
  } catch (err) {
    return refuse(`the device key ${keyPath} is not a usable private key: ${(err as Error).message}`);
  }
  return { ok: true, material: { ca: caPem, cert: certPem, key: keyPem, caFingerprint } };
}
