import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { PluginContext } from 'lookout/core';

type Ctx = Pick<PluginContext, 'log' | 'onStop'>;

/**
 * Reads the device certificate again on SIGHUP (what an operator sends after `lookout certs
 * --renew` put a new one in place; the tool server reloads its TLS context on the same signal) and
 * hands on its fingerprint when it changed, for hello to announce: the hub pins the announced
 * fingerprint, so a renewed certificate served but not announced would be refused. A file that
 * cannot be read or parsed keeps the fingerprint announced.
 */
export function watchCertificateOnSighup(ctx: Ctx, certPath: string, current: () => string | null, onChange: (fingerprint: string) => void): void {
  const reread = async (): Promise<void> => {
    let fingerprint: string;
    try {
      fingerprint = new X509Certificate(await readFile(certPath)).fingerprint256;
    } catch (err) {
      ctx.log.warn({ certPath }, `SIGHUP: the device certificate was not read again, the announced fingerprint stays: ${(err as Error).message}`);
      return;
    }
    if (fingerprint !== current()) onChange(fingerprint);
  };
  const onHup = (): void => void reread();
  process.on('SIGHUP', onHup);
  ctx.onStop(() => process.off('SIGHUP', onHup));
}
