import type { AgentOptions } from 'node:https';
import { fleetCaDeviceTls } from 'lookout/lib/tls';
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

/** TLS options for the agent of a device that speaks https: the fleet CA in `caPath` only, the device's announced certificate pinned. */
export function fleetCaTls(caPath: string): (target: PoolTarget) => AgentOptions {
  const options = fleetCaDeviceTls(caPath);
  return (target) => options({ deviceId: target.deviceId, fingerprint: target.tlsFingerprint ?? null });
}
