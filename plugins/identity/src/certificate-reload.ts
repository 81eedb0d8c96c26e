import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { PluginContext } from 'lookout/core';
import { notAfterOf } from './device-certificate.js';

type Ctx = Pick<PluginContext, 'log' | 'onStop'>;

/**
 * Reads the device certificate again on SIGHUP (what an operator sends after `lookout certs
 * --renew` put a new one in place; the tool server reloads its TLS context on the same signal) and
 * hands on its fingerprint and end when it changed, for hello to announce: the hub pins the announced
 * fingerprint, so a renewed certificate served but not announced would be refused, and its readiness
 * warns from the announced end. A file that cannot be read or parsed keeps what was announced.
 */
/**
 * Reads the certificate file once more and hands on its fingerprint and end when they changed (SIGHUP,
 * and the announce_identity tool). Answers whether it changed; a file that cannot be read keeps what was announced.
 */
export async function rereadCertificate(
  ctx: Ctx,
  certPath: string,
  current: () => string | null,
  onChange: (next: { fingerprint: string; notAfter: string }) => void,
): Promise<boolean> {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(await readFile(certPath));
  } catch (err) {
    ctx.log.warn({ certPath }, `the device certificate was not read again, the announced fingerprint stays: ${(err as Error).message}`);
    return false;
  }
  if (cert.fingerprint256 === current()) return false;
  onChange({ fingerprint: cert.fingerprint256, notAfter: notAfterOf(cert) });
  return true;
}

export function watchCertificateOnSighup(
  ctx: Ctx,
  certPath: string,
  current: () => string | null,
  onChange: (next: { fingerprint: string; notAfter: string }) => void,
): void {
  const onHup = (): void => void rereadCertificate(ctx, certPath, current, onChange);
  process.on('SIGHUP', onHup);
  ctx.onStop(() => process.off('SIGHUP', onHup));
}
