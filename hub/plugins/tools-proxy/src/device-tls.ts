import { readFileSync } from 'node:fs';
import type { AgentOptions } from 'node:https';
import { deviceTlsOptions, LookoutError } from 'lookout/core';
import type { RegisteredDevice } from '../../registry/src/service.js';
import type { PoolTarget } from './mcp-pool.js';

/** The pool's target for a registered device: its tool URL and, over https, the fingerprint it must present. */
export function poolTarget(device: RegisteredDevice): PoolTarget {
  return {
    url: device.toolUrl!,
    deviceId: device.deviceId,
    ...(device.tlsFingerprint !== undefined ? { tlsFingerprint: device.tlsFingerprint } : {}),
  };
}

/**
 * TLS options for the agent of a device that speaks https: the fleet CA of the hub's data dir
 * (`<hub data>/tls/fleet_ca.crt`, what `lookout certs --hub-data` writes), read when the device's
 * client is made (rarely: clients are kept), so a CA put in place while the hub runs serves the
 * next client. Without it no device can be verified: device_unreachable naming the file.
 */
export function fleetCaTls(caPath: string): (target: PoolTarget) => AgentOptions {
  return (target) => {
    let ca: Buffer;
    try {
      ca = readFileSync(caPath);
    } catch (err) {
      throw new LookoutError(
        'device_unreachable',
        `${target.deviceId} serves its tools over TLS and the hub has no fleet CA to verify it (${caPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); run lookout certs --hub-data`,
        { details: { device_id: target.deviceId, reason: 'no_fleet_ca', ca: caPath } },
      );
    }
    return deviceTlsOptions(ca, { deviceId: target.deviceId, fingerprint: target.tlsFingerprint ?? null });
  };
}
