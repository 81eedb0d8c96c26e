import { z } from 'zod';
import { DeviceIdSchema, IpAddressSchema, PortSchema } from 'lookout/core/contracts';

/** An IP address or a DNS name (the registry file's rule for ssh_host). */
export const HostSchema = z.union([
  IpAddressSchema,
  z.string().regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i, 'an IP address or host name'),
]);

/** How the hub authenticates to the new device: its own configured credentials, a password, or a private key (PEM or OpenSSH). */
export const AuthSchema = z.discriminatedUnion('method', [
  z.strictObject({ method: z.literal('hub').describe("the hub's DEVICE_PASSWORD / LOOKOUT_SSH_KEY_FILE") }),
  z.strictObject({ method: z.literal('password'), password: z.string().min(1).max(1024).describe('never stored, logged or answered') }),
  z.strictObject({
    method: z.literal('key'),
    private_key: z
      .string()
      .min(1)
      .max(16 * 1024)
      .describe('a private key (PEM or OpenSSH); never stored, logged or answered'),
    passphrase: z.string().min(1).max(1024).optional(),
  }),
]);

/** The layer aliases a device takes (core's resolveLayer checks the value). */
const LayerSchema = z
  .string()
  .regex(/^[a-z0-9_]{1,32}$/i, 'a layer alias such as layer2 or layer0_baseline')
  .describe('configuration layer: layer0..layer5 or an alias');

const AbsolutePath = z
  .string()
  .max(1024)
  .regex(/^\/[^\0]*$/, 'an absolute path')
  .refine((p) => !p.split('/').includes('..'), 'must not contain ..');

export const ProvisionBodySchema = z.strictObject({
  device_id: DeviceIdSchema,
  host: HostSchema.describe("the device's SSH address (also its registry address)"),
  port: PortSchema.default(22).describe('SSH port'),
  user: z
    .string()
    .regex(/^[a-z_][a-z0-9_.-]{0,31}$/i, 'a user name')
    .default('root'),
  auth: AuthSchema.default({ method: 'hub' }),
  host_key: z
    .string()
    .max(8192)
    .regex(/^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+={0,3}( .*)?$/, 'an OpenSSH public key line: <type> <base64>')
    .optional()
    .describe("the device's SSH host key to pin (its /etc/ssh/ssh_host_*_key.pub); refused when another key is pinned for the address"),
  layer: LayerSchema.default('layer2'),
  root: AbsolutePath.default('/').describe("the device's filesystem root: / on a device (another folder for a staged image)"),
  mqtt_url: z
    .url({ protocol: /^(mqtt|mqtts|ssl|tls)$/ })
    .refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), 'must not carry credentials (user:password@)')
    .optional()
    .describe("the broker as the device reaches it; default LOOKOUT_PROVISION_MQTT_URL, else the hub's broker"),
  hello_timeout_s: z.number().int().min(1).max(600).optional().describe('how long to wait for its hello; default LOOKOUT_PROVISION_HELLO_TIMEOUT_S'),
  undo: z.boolean().default(false).describe('take a (half-)done provisioning back: the files it pushes, its registry entry and its record'),
});
export type ProvisionBody = z.output<typeof ProvisionBodySchema>;

export const STEP_NAMES = ['connect', 'fleet_ca', 'peer_certificate', 'mesh_key', 'device_env', 'layer_env', 'registry', 'start', 'hello', 'grade'] as const;
export type StepName = (typeof STEP_NAMES)[number];

export const STEP_STATUSES = ['pending', 'done', 'unchanged', 'skipped', 'failed', 'undone'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const StepSchema = z.object({
  name: z.enum(STEP_NAMES),
  status: z.enum(STEP_STATUSES).describe('done: it acted; unchanged: the check found it so already; skipped: nothing to do here; failed: see detail'),
  detail: z.string().nullable().describe('what it did or found (never a secret)'),
  at: z.string().nullable().describe('when it last ran (ISO 8601)'),
});
export type Step = z.infer<typeof StepSchema>;

export const ProvisionGradeSchema = z.object({ grade: z.enum(['ready', 'degraded', 'not_ready']), reason: z.string().nullable(), checked_at: z.string() });

export const ProvisionRecordSchema = z.object({
  device_id: z.string(),
  host: z.string(),
  port: z.number().int(),
  user: z.string(),
  layer: z.string(),
  root: z.string(),
  mqtt_url: z.string(),
  state: z.enum(['in_progress', 'provisioned', 'failed']),
  steps: z.array(StepSchema),
  /** When a pushed file last changed: a hello from before it is the device's old self. */
  pushed_at: z.string().nullable(),
  grade: ProvisionGradeSchema.nullable(),
  updated_at: z.string(),
});
export type ProvisionRecord = z.infer<typeof ProvisionRecordSchema>;

export const ProvisionResponseSchema = z.object({
  device_id: z.string(),
  state: z.enum(['provisioned', 'undone']),
  changed: z.boolean().describe('false: every step found the device as it should be (a repeated call)'),
  resumed: z.boolean().describe('a half-done provisioning of this device was picked up where it stopped'),
  steps: z.array(StepSchema),
  grade: ProvisionGradeSchema.nullable().describe('the readiness grade after its hello; null without the readiness plugin or on undo'),
});

export const ProvisionListSchema = z.object({ provisions: z.array(ProvisionRecordSchema) });

export const ProvisionStateSchema = z.object({ devices: z.record(z.string(), ProvisionRecordSchema) });
