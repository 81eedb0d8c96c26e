import { readFile } from 'node:fs/promises';
import { keyMatchesCertificate } from 'lookout/core';

/** The device certificate and key, read together; a reason instead when they are missing or not a pair. */
export type HttpsMaterial = { ok: true; cert: Buffer; key: Buffer } | { ok: false; reason: string };

/**
 * What ONVIF over HTTPS serves with: the device certificate the identity plugin holds (the fleet
 * CA's, `lookout certs --device`), the same a client pins from GetDeviceInformation's HardwareId.
 */
export async function readHttpsMaterial(certPath: string, keyPath: string): Promise<HttpsMaterial> {
  let cert: Buffer;
  let key: Buffer;
  try {
    [cert, key] = await Promise.all([readFile(certPath), readFile(keyPath)]);
  } catch (err) {
    return { ok: false, reason: `the device certificate cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  if (!keyMatchesCertificate(cert, key)) return { ok: false, reason: `${keyPath} is not the private key of ${certPath}` };
  return { ok: true, cert, key };
}
