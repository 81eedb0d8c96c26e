import { z } from 'zod';
import { DeviceIdSchema, IpAddressSchema, RoleLabelSchema } from './common.js';

/** One device as the registry shows it (spec 01: device_id, ips, labels, roles, bus_id). */
export const RegistryShadowSchema = z.looseObject({
  device_id: DeviceIdSchema,
  ips: z.array(IpAddressSchema),
  labels: z.array(RoleLabelSchema),
  roles: z.array(z.string().min(1)),
  bus_id: z.string().min(1),
});
/** One device of the registry as parsed (see RegistryShadowSchema). */
export type RegistryShadow = z.infer<typeof RegistryShadowSchema>;

/** The spec does not show a registry device's fields beyond its presence; the id is required. */
export const RegistryDeviceSchema = z.looseObject({ device_id: DeviceIdSchema });

/** `GET /fleet/registry` (spec 01, "Registry record"). */
export const RegistryRecordSchema = z
  .looseObject({
    registry: z.looseObject({
      bus_id: z.string().min(1).describe('fleet bus identifier'),
      devices: z.array(RegistryDeviceSchema),
    }),
    vms_lan_ip: IpAddressSchema.describe('LAN address of the proxy host'),
    shadows: z.array(RegistryShadowSchema),
    path: z.string().min(1).describe('registry file'),
  })
  .describe('registry record (spec 01)');
/** A registry record as parsed (see RegistryRecordSchema). */
export type RegistryRecord = z.infer<typeof RegistryRecordSchema>;
