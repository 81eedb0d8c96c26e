import { z } from 'zod';
import { PluginReportSchema } from './plugin-report.js';
import { LAYER_IDS } from '../plugin/manifest.js';
import { DeviceIdSchema, IpAddressSchema, RoleLabelSchema, TimestampSchema } from './common.js';
import { DevicePortsSchema } from './device-ports.js';

/** The `versions` of a hello: the version of the Lookout runtime the device runs and of each of its plugins. */
export const DeviceVersionsSchema = z.looseObject({
  runtime: z.string().min(1).describe('version of the Lookout runtime'),
  plugins: z.record(z.string(), z.string()).optional().describe('plugin name → version'),
});

/**
 * `devices/<device_id>/hello`, on every connect (DESIGN.md "Wire decisions"): everything the hub
 * needs to reach the device. Field names follow the registry's shadows (device_id, ips, labels,
 * roles) so a hello merges into the registry as it is.
 */
export const HelloMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    device_id: DeviceIdSchema,
    labels: z.array(RoleLabelSchema).min(1).describe("role labels; the first is the device's camera_id"),
    roles: z.array(z.string().min(1)).describe('device roles, e.g. camera or precision'),
    ips: z.array(IpAddressSchema).min(1),
    ports: DevicePortsSchema,
    image: z.string().min(1).describe('device image: camera, precision or a path'),
    layer: z.enum(LAYER_IDS).describe('active configuration layer, canonical id'),
    versions: DeviceVersionsSchema,
    serial: z.string().min(1).optional(),
    /**
     * Surfaces of `ports` that serve TLS with the device certificate (`["tools"]`: the tool server,
     * its recordings and /metrics are https). Absent or without a surface: plain HTTP there. The
     * spec's hello lists ports only; this optional field is the hub's cue to dial https and pin.
     */
    tls: z.array(z.string().min(1).max(64)).max(32).optional(),
    /** SHA-256 of the device certificate's DER, colon hex (the identity plugin's): what the hub pins over TLS. */
    cert_fingerprint: z.string().min(1).max(128).optional(),
    /**
     * When that certificate ends (ISO 8601, UTC): the hub's readiness warns 30 days ahead and fails
     * the device once it has ended. Optional: a device before it announces none and is not judged on it.
     */
    cert_not_after: TimestampSchema.optional(),
    /** Every plugin with its state: a failed plugin shows here with its code and message. */
    plugins: z.array(PluginReportSchema).optional(),
  })
  .describe('hello message (DESIGN.md wire decisions)');
/** A hello message as parsed (see HelloMessageSchema). */
export type HelloMessage = z.infer<typeof HelloMessageSchema>;
