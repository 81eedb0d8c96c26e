import { z } from 'zod';
import { deviceInfo, type PluginContext } from 'lookout/core';
import { type HelloMessage } from 'lookout/core/contracts';
import { deviceAddresses } from './device-addresses.js';
import type { DeviceIdentity } from './service.js';

export const DeviceIdentityResultSchema = z.object({
  device_id: z.string(),
  serial: z.string(),
  role: z.string().describe('the first role label (camera_id)'),
  labels: z.array(z.string()),
  roles: z.array(z.string()),
  image: z.string(),
  layer: z.string(),
  ips: z.array(z.string()),
  listen_ports: z.record(z.string(), z.number().int()).describe('listening ports by surface (tools, onvif, rtsp, mesh, sidecar)'),
  cert_fingerprint: z.string().nullable().describe('SHA-256 of the device certificate DER, colon hex'),
  cert_fingerprint_present: z.boolean(),
  cert_not_after: z.string().nullable().describe('when the device certificate ends (ISO 8601); null without one'),
  fingerprint_algorithm: z.literal('sha256'),
  cert_path: z.string(),
  key_durable: z
    .boolean()
    .nullable()
    .describe('true: the device key is on disk; false: held in memory only until it can be written (a full disk), so a restart would change it; null: no key'),
  key_durable_reason: z.string().nullable().describe('why key_durable is false (the failed write); null otherwise'),
  versions: z.record(z.string(), z.unknown()),
});
export type DeviceIdentityResult = z.infer<typeof DeviceIdentityResultSchema>;

type Ctx = Pick<PluginContext, 'runtime' | 'ports'>;

/** Runtime, core, Node and plugin versions, as hello and the identity tool report them. */
export function deviceVersions(ctx: Ctx): { runtime: string; core: string; node: string; plugins: Record<string, string> } {
  const settings = deviceInfo(ctx.runtime);
  return {
    runtime: settings.runtimeVersion,
    core: settings.coreVersion,
    node: process.versions.node,
    plugins: Object.fromEntries(settings.plugins().map((p) => [p.name, p.version])),
  };
}

export function identityResult(ctx: Ctx, identity: DeviceIdentity): DeviceIdentityResult {
  const fingerprint = identity.fingerprint();
  const key = identity.keyDurability();
  return {
    device_id: identity.deviceId,
    serial: identity.serial,
    role: identity.labels[0],
    labels: identity.labels,
    roles: identity.roles,
    image: ctx.runtime.image ?? 'unknown',
    layer: ctx.runtime.layer ?? 'unknown',
    ips: deviceAddresses(deviceInfo(ctx.runtime).listenHost),
    listen_ports: ctx.ports.all(),
    cert_fingerprint: fingerprint,
    cert_fingerprint_present: fingerprint !== null,
    cert_not_after: identity.certNotAfter(),
    fingerprint_algorithm: 'sha256',
    cert_path: identity.certPath,
    key_durable: key.durable,
    key_durable_reason: key.reason,
    versions: deviceVersions(ctx),
  };
}

/** The `hello` announcement (DESIGN.md): everything the hub needs to reach this device. */
export function helloMessage(ctx: Ctx, identity: DeviceIdentity): HelloMessage {
  const fingerprint = identity.fingerprint();
  const notAfter = identity.certNotAfter();
  return {
    timestamp: new Date().toISOString(),
    device_id: identity.deviceId,
    labels: identity.labels,
    roles: identity.roles,
    ips: deviceAddresses(deviceInfo(ctx.runtime).listenHost),
    ports: ctx.ports.all() as HelloMessage['ports'],
    image: ctx.runtime.image ?? 'unknown',
    layer: ctx.runtime.layer!,
    versions: deviceVersions(ctx),
    plugins: deviceInfo(ctx.runtime).plugins(),
    serial: identity.serial,
    ...(fingerprint ? { cert_fingerprint: fingerprint } : {}),
    ...(fingerprint && notAfter ? { cert_not_after: notAfter } : {}),
    ...tlsOf(ctx),
  };
}

/** The surfaces that speak TLS: the host's (`tools`) and those plugins announced so (`live`). */
function tlsOf(ctx: Ctx): { tls?: string[] } {
  const tls = [...new Set([...deviceInfo(ctx.runtime).tlsSurfaces, ...ctx.ports.tls()])];
  return tls.length > 0 ? { tls } : {};
}
