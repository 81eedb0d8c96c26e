import { readFile } from 'node:fs/promises';
import type { PluginContext } from 'lookout/core';
import { saveCertificateFiles } from './certificate-files.js';
import type { DeviceCertificate } from './device-certificate.js';
import { retryUntilSaved } from './durable-retry.js';
import type { KeyDurability } from './service.js';

type Ctx = Pick<PluginContext, 'clock' | 'health' | 'log' | 'onStop'>;

/**
 * Whether the device key is on disk, kept true to the disk. A key generated but not written (a full
 * disk at first start) makes the plugin `degraded` with the reason, and is written on a timer
 * through the plugin's clock until space returns; then the plugin is `ok` again. The hub learns it
 * from the plugin state in status and health, and from get_device_identity's `key_durable`.
 */
export function trackKeyDurability(ctx: Ctx, cert: DeviceCertificate, retryMs: number): () => KeyDurability {
  const { unsaved } = cert;
  if (!unsaved) {
    const fixed: KeyDurability = { durable: cert.fingerprint === null ? null : true, reason: null };
    return () => fixed;
  }
  const { log, health } = ctx;
  let state: KeyDurability = { durable: false, reason: unsaved.reason };
  const degrade = (reason: string): void => {
    state = { durable: false, reason };
    health.set('degraded', `the device key is not yet durable, held in memory only (${reason}); retrying every ${retryMs / 1000} s`);
  };
  degrade(unsaved.reason);
  const material = { keyPem: unsaved.keyPem, certPem: unsaved.certPem };
  // A certificate provisioned meanwhile (an operator pushed one) is never overwritten: it and its
  // key take effect at the next start, and until then the key in memory stays not durable.
  let supplanted = false;
  const save = async (): Promise<void> => {
    const onDisk = await readFile(cert.certPath, 'utf8').catch(() => null);
    if (onDisk !== null && onDisk !== material.certPem) {
      supplanted = true;
      return;
    }
    await saveCertificateFiles(cert, material);
  };
  const retry = retryUntilSaved({
    clock: ctx.clock,
    everyMs: retryMs,
    save,
    onFailed(err, attempts) {
      const reason = (err as Error).message;
      // Every retry fails the same way while the disk stays full: say it once, not every period.
      if (reason === state.reason) {
        log.debug({ attempts }, `device key still not written: ${reason}`);
        return;
      }
      log.warn({ attempts }, `device key still not written: ${reason}`);
      degrade(reason);
    },
    onSaved(attempts) {
      if (supplanted) {
        const reason = `another certificate was provisioned at ${cert.certPath}; it takes effect at the next start`;
        log.warn({ certPath: cert.certPath }, `the device key in memory is not written: ${reason}`);
        state = { durable: false, reason };
        health.set('degraded', `the device key in memory is not durable: ${reason}`);
        return;
      }
      state = { durable: true, reason: null };
      health.set('ok');
      log.info({ certPath: cert.certPath, fingerprint: cert.fingerprint, attempts }, 'the device key and certificate are now on disk');
    },
  });
  ctx.onStop(() => retry.cancel());
  return () => state;
}
