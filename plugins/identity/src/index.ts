import { z } from 'zod';
import { DEVICE_PATHS, definePlugin, devicePath, deviceInfo, toLookoutError } from 'lookout/core';
import { busTopic } from 'lookout/core/contracts';
import { ensureDeviceCertificate } from './device-certificate.js';
import { deviceSerial } from './device-serial.js';
import { DeviceIdentityResultSchema, helloMessage, identityResult } from './identity-report.js';
import { trackKeyDurability } from './key-durability.js';
import { rereadCertificate, watchCertificateOnSighup } from './certificate-reload.js';
import { DeviceIdentityToken, type DeviceIdentity } from './service.js';

export const IdentityConfig = z.object({
  /** The serial, when the board does not expose one. */
  DEVICE_SERIAL: z.string().min(1).optional(),
  /** auto: generate a missing certificate in development (data root other than `/`); 1: always; 0: never. */
  IDENTITY_CERT_GENERATE: z.enum(['auto', '1', '0']).default('auto'),
  /** How often a generated key that could not be written (a full disk) is tried again. */
  IDENTITY_SAVE_RETRY_MS: z.coerce.number().int().min(50).default(30_000),
});

/**
 * Who the device is: id, serial, roles, addresses, listening ports and the fingerprint of its
 * certificate. Owns `hello`, announced on every connect so the hub learns where to reach the device.
 * A key that cannot be written (a full disk) never keeps the device from starting: it runs from
 * memory, the plugin is `degraded` saying so, and the key is written once space returns.
 */
export default definePlugin({
  name: 'identity',
  version: '1.0.0',
  core: '^1',
  description: 'device identity, certificate fingerprint and the hello announcement',
  layer: 'layer0',
  config: IdentityConfig,
  provides: [DeviceIdentityToken],
  topics: [busTopic('hello')],
  tools: [
    {
      name: 'get_device_identity',
      readOnly: true,
      idempotent: true,
      description: 'Device id, serial, role labels, addresses, listening ports and the SHA-256 fingerprint of the device certificate',
      input: z.object({}),
      output: DeviceIdentityResultSchema,
    },
    {
      name: 'announce_identity',
      description:
        'Reads the device certificate again (one renewed in /data/config/shadow_peer.crt) and publishes hello now: the hub learns the device again (its address, ports, fingerprint and certificate end) without a restart',
      input: z.object({}),
      output: z.object({
        announced: z.boolean().describe('hello was handed to the bus'),
        certificate_changed: z.boolean().describe('the certificate file held another certificate than the one announced before'),
        cert_fingerprint: z.string().nullable(),
        cert_not_after: z.string().nullable(),
      }),
    },
  ],
  async start(ctx) {
    const { runtime, config, log } = ctx;
    const settings = deviceInfo(runtime);
    const generate = config.IDENTITY_CERT_GENERATE === '1' || (config.IDENTITY_CERT_GENERATE === 'auto' && runtime.dataDir !== '/');
    const cert = await ensureDeviceCertificate({
      certPath: devicePath(runtime.dataDir, DEVICE_PATHS.peerCert),
      keyPath: devicePath(runtime.dataDir, DEVICE_PATHS.peerKey),
      generate,
      commonName: runtime.id,
      dnsNames: [runtime.id, 'localhost'],
      ips: ['127.0.0.1'],
      log,
    });
    const keyDurability = trackKeyDurability(ctx, cert, config.IDENTITY_SAVE_RETRY_MS);
    const { serial, source } = await deviceSerial({
      ...(config.DEVICE_SERIAL ? { configured: config.DEVICE_SERIAL } : {}),
      dataDir: runtime.dataDir,
      deviceId: runtime.id,
    });
    let fingerprint = cert.fingerprint;
    let notAfter = cert.notAfter;
    const identity: DeviceIdentity = {
      deviceId: runtime.id,
      serial,
      fingerprint: () => fingerprint,
      certNotAfter: () => notAfter,
      keyDurability,
      certPath: cert.certPath,
      keyPath: cert.keyPath,
      labels: settings.labels,
      roles: settings.roles,
    };
    ctx.services.provide(DeviceIdentityToken, identity);
    ctx.tools.register('get_device_identity', () => identityResult(ctx, identity));
    const publishHello = (): Promise<boolean> =>
      ctx.bus.publish('hello', helloMessage(ctx, identity)).then(
        () => true,
        (err: unknown) => {
          const e = toLookoutError(err);
          log.warn({ code: e.code }, `hello not published: ${e.message}`);
          return false;
        },
      );
    const announce = (): void => void publishHello();
    const renewed = (next: { fingerprint: string; notAfter: string }): void => {
      log.info(
        { fingerprint: next.fingerprint, notAfter: next.notAfter, previous: fingerprint },
        'device certificate renewed: announcing its fingerprint and end',
      );
      fingerprint = next.fingerprint;
      notAfter = next.notAfter;
    };
    // The hub's remediation re-announces a device it lost, or one whose certificate an operator renewed.
    ctx.tools.register('announce_identity', async () => {
      const changed = await rereadCertificate(ctx, cert.certPath, () => fingerprint, renewed);
      const announced = settings.oneShot ? false : await publishHello();
      return { announced, certificate_changed: changed, cert_fingerprint: fingerprint, cert_not_after: notAfter };
    });
    // In the one-shot modes nothing listens and the bus is in-process: there is nobody to greet.
    if (!settings.oneShot) {
      ctx.bus.onConnect(announce);
      // A renewed certificate (SIGHUP) is announced at once: the hub pins the fingerprint hello gives.
      watchCertificateOnSighup(
        ctx,
        cert.certPath,
        () => fingerprint,
        (next) => {
          renewed(next);
          announce();
        },
      );
    }
    log.info({ serial, serialSource: source, fingerprint: cert.fingerprint, notAfter: cert.notAfter, keyDurable: keyDurability().durable }, 'identity ready');
  },
});
