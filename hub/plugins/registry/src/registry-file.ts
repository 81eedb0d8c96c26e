import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DeviceIdSchema, IpAddressSchema, PortSchema, RoleLabelSchema } from 'lookout/core/contracts';
import { LookoutError } from 'lookout/core';
import { DEFAULT_RECORDINGS_ROOT } from './service.js';

/** An IP address or a DNS name: what the operator writes as a device's SSH address. */
const HostSchema = z.union([
  IpAddressSchema,
  z.string().regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i, 'an IP address or host name'),
]);

/**
 * The registry file (`--registry <file>`, JSON), written by the operator. A device named here is
 * registered: the hub will contact it at the addresses given here even outside --device-networks.
 * Unknown keys are refused so that a typo does not silently lose a device.
 */
export const RegistryFileDeviceSchema = z.strictObject({
  device_id: DeviceIdSchema,
  ips: z.array(IpAddressSchema).default([]).describe('addresses the hub may contact; empty: those of its hello'),
  labels: z.array(RoleLabelSchema).default([]).describe('role labels; "canary" makes it the canary target'),
  roles: z.array(z.string().min(1)).default([]),
  tool_port: PortSchema.optional().describe('tool server port; default: the port its hello announces, else 8765'),
  tool_url: z
    .url({ protocol: /^https?$/ })
    // fetch refuses a URL with credentials, and the failure would carry them into answers and logs.
    .refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), 'must not carry credentials (user:password@)')
    .optional()
    .describe('full tool server URL, overriding ips and tool_port'),
  ssh_host: HostSchema.optional().describe('SSH address of the device; default: the address its tool server is reached at'),
  ssh_port: PortSchema.optional().describe('SSH port of the device; default 22'),
  ssh_user: z
    .string()
    .regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, 'a user name')
    .optional()
    .describe('SSH user; default root'),
  recordings_root: z
    .string()
    .max(1024)
    .regex(/^\/[^\0]*$/, 'an absolute path')
    .refine((p) => !p.split('/').includes('..'), 'must not contain ..')
    .optional()
    .describe(`recordings directory on the device, the only place the hub reads over SSH; default ${DEFAULT_RECORDINGS_ROOT}`),
});

export const RegistryFileSchema = z.strictObject({
  bus_id: z.string().min(1).optional().describe('fleet bus identifier'),
  vms_lan_ip: IpAddressSchema.optional().describe('LAN address of the hub host'),
  devices: z.array(RegistryFileDeviceSchema).default([]),
});
export type RegistryFile = z.output<typeof RegistryFileSchema>;
export type RegistryFileDevice = z.output<typeof RegistryFileDeviceSchema>;

/** Reads and checks the registry file; a missing file is empty unless `required`. */
export function readRegistryFile(path: string, required: boolean): RegistryFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !required) return { devices: [] };
    throw new LookoutError('config_invalid', `registry file ${path} cannot be read: ${(err as Error).message}`, { cause: err, details: { file: path } });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new LookoutError('config_invalid', `registry file ${path} is not JSON: ${(err as Error).message}`, { details: { file: path } });
  }
  const parsed = RegistryFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue.code === 'unrecognized_keys' ? `.${issue.keys.join(',')}` : '';
    const at = issue.path.map(String).join('.') + keys;
    throw new LookoutError('config_invalid', `registry file ${path}: ${at || '(root)'}: ${issue.message}`, {
      details: { file: path, issues: parsed.error.issues },
    });
  }
  const seen = new Set<string>();
  for (const d of parsed.data.devices) {
    if (seen.has(d.device_id))
      throw new LookoutError('config_invalid', `registry file ${path} lists the device "${d.device_id}" twice`, {
        details: { file: path, device_id: d.device_id },
      });
    seen.add(d.device_id);
  }
  return parsed.data;
}
