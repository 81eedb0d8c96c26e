import { join, resolve } from 'node:path';
import { z } from 'zod';
import { HUB_INFO, HUB_STATE, type StateKeeper } from 'lookout/hub';
import { BODY_ROUTE_ERRORS, LookoutError, definePlugin } from 'lookout/core';
import { KnownHosts, SSH_ERRORS, SshCredentials } from 'lookout/lib/ssh';
import { openFleetCa, type FleetCa } from 'lookout/lib/tls';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { READINESS_GRADES } from '../../readiness/src/service.js';
import { ProvisionBodySchema, ProvisionListSchema, ProvisionResponseSchema, ProvisionStateSchema, type ProvisionBody } from './provision-schemas.js';
import { ProvisionRecords } from './provision-records.js';
import { Provisioner } from './provisioner.js';
import { RegistryFileEditor } from './registry-entry.js';
import { FLEET_PROVISION, type FleetProvision } from './service.js';

const STATE_KEY = 'fleet-provision';

/**
 * POST /fleet/provision-shadow (spec 01's route list): brings a new device into the fleet in one
 * call. Over SSH (root, a password or key from the body or the hub's, the host key pinned) it puts
 * the fleet CA, a peer certificate signed by it, the mesh key, the device's service env (bus
 * credentials and tool token, derived from the fleet secret) and its layer env on the device, each
 * file checked first and written atomically (keys 0600); adds the device to the registry file,
 * starts its service, waits for its hello and grades it. Every step is recorded in the hub state:
 * a repeated call changes nothing, a failed one is resumed by the next, `undo` takes it back.
 * Its certificate and layer steps serve POST /fleet/remediate too (FLEET_PROVISION), on devices
 * it provisioned or that the registry gives an SSH address.
 */
export default definePlugin({
  name: 'fleet-provision',
  version: '1.0.0',
  core: '^1',
  description: 'POST /fleet/provision-shadow: a new device brought into the fleet over SSH (certificate, keys, env, registry), its hello awaited and graded',
  requires: [DEVICE_REGISTRY, HUB_INFO],
  optionalRequires: [HUB_STATE, READINESS_GRADES, DEBUG_RING],
  provides: [FLEET_PROVISION],
  config: z.object({
    LOOKOUT_FLEET_SECRET: z.string().min(16).optional().describe('the fleet secret the device credentials derive from (the hub sets it)'),
    LOOKOUT_FLEET_CA_DIR: z
      .string()
      .min(1)
      .optional()
      .describe('the fleet CA folder (ca.crt, ca.key) of lookout certs; default <hub data dir>/ca. Its key signs the peer certificates'),
    LOOKOUT_PROVISION_MQTT_URL: z.string().min(1).optional().describe("the broker URL devices are given; default the hub's broker"),
    LOOKOUT_PROVISION_HELLO_TIMEOUT_S: z.coerce.number().int().min(1).max(600).default(120).describe("how long a provisioning waits for the device's hello"),
    LOOKOUT_PROVISION_START_COMMAND: z
      .string()
      .default('systemctl restart lookout-edge')
      .describe("runs on the device once its files changed (deploy/lookout-edge.service); empty: the device's service starts itself"),
    DEVICE_PASSWORD: z.string().min(1).optional().describe("SSH password of the devices when a call's auth is hub; never logged"),
    LOOKOUT_SSH_KEY_FILE: z.string().min(1).optional(),
    LOOKOUT_SSH_KEY_PASSPHRASE: z.string().min(1).optional(),
    LOOKOUT_SSH_KNOWN_HOSTS: z.string().min(1).optional().describe('pinned device host keys; default <hub data dir>/ssh_known_hosts (as device-ssh)'),
    LOOKOUT_SSH_ACCEPT_NEW: z.enum(['0', '1']).default('0'),
    LOOKOUT_SSH_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    LOOKOUT_SSH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  }),
  errors: [
    {
      code: 'hello_timeout',
      status: 504,
      description: 'the files are on the device but it said no hello within the bound; call again once it runs (the done steps are kept)',
    },
    { code: 'provision_in_progress', status: 409, description: 'a provisioning of this device is running; wait for its answer' },
    { code: 'fleet_ca_unavailable', status: 503, description: 'the hub has no fleet CA to sign the peer certificate (LOOKOUT_FLEET_CA_DIR); nothing was done' },
  ],
  routes: [
    {
      method: 'POST',
      path: '/fleet/provision-shadow',
      summary: 'Provision a device over SSH (certificate, keys, env, layer, registry), wait for its hello and grade it; idempotent, resumable, undo',
      body: ProvisionBodySchema,
      response: ProvisionResponseSchema,
      errors: [
        'fleet-provision.hello_timeout',
        'fleet-provision.provision_in_progress',
        'fleet-provision.fleet_ca_unavailable',
        'device_unreachable',
        ...SSH_ERRORS,
        'layer_unknown',
        'argument_invalid',
        'config_invalid',
        ...BODY_ROUTE_ERRORS,
      ],
    },
    {
      method: 'GET',
      path: '/fleet/provision-shadow',
      summary: "Each device's last provisioning: its steps and how each ended (no secret)",
      response: ProvisionListSchema,
    },
  ],
  async start(ctx) {
    const c = ctx.config;
    const dataDir = resolve(ctx.runtime.dataDir);
    const info = ctx.services.get(HUB_INFO);
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const ring = ctx.services.optional(DEBUG_RING);
    const hubCredentials = SshCredentials.load({ password: c.DEVICE_PASSWORD, keyFile: c.LOOKOUT_SSH_KEY_FILE, passphrase: c.LOOKOUT_SSH_KEY_PASSPHRASE });
    const caDir = resolve(c.LOOKOUT_FLEET_CA_DIR ?? join(dataDir, 'ca'));

    let keeper: StateKeeper | undefined;
    const records = new ProvisionRecords(() => keeper?.changed());
    const store = ctx.services.optional(HUB_STATE);
    if (store) {
      const loaded = await store.load(STATE_KEY, (raw) => ProvisionStateSchema.parse(raw));
      if (loaded.value) records.restore(loaded.value.devices);
      if (loaded.warning) ctx.log.warn(loaded.warning);
      const k = (keeper = store.keep(STATE_KEY, () => records.snapshot()));
      ctx.onStop(() => k.flush());
    }

    const fleetCa = async (): Promise<FleetCa> => {
      try {
        return (await openFleetCa(caDir, { create: false })).ca;
      } catch (err) {
        throw new LookoutError('fleet-provision.fleet_ca_unavailable', `no fleet CA to sign the device's certificate: ${(err as Error).message}`, {
          details: { ca_dir: caDir },
        });
      }
    };
    const brokerUrl = /^(mqtt|mqtts|ssl|tls):\/\//.test(info.brokerUrl) ? info.brokerUrl : undefined;
    const provisioner = new Provisioner({
      fleetSecret: c.LOOKOUT_FLEET_SECRET ?? '',
      fleetCa,
      hubCredentials,
      credentialsOf: (auth: ProvisionBody['auth']) =>
        auth.method === 'hub'
          ? hubCredentials
          : auth.method === 'password'
            ? new SshCredentials({ password: auth.password })
            : new SshCredentials({ privateKey: Buffer.from(auth.private_key, 'utf8'), ...(auth.passphrase ? { passphrase: auth.passphrase } : {}) }),
      knownHosts: new KnownHosts(c.LOOKOUT_SSH_KNOWN_HOSTS ? resolve(c.LOOKOUT_SSH_KNOWN_HOSTS) : join(dataDir, 'ssh_known_hosts')),
      acceptNew: c.LOOKOUT_SSH_ACCEPT_NEW === '1',
      connectTimeoutMs: c.LOOKOUT_SSH_CONNECT_TIMEOUT_MS,
      commandTimeoutMs: c.LOOKOUT_SSH_TIMEOUT_MS,
      defaultMqttUrl: c.LOOKOUT_PROVISION_MQTT_URL ?? brokerUrl,
      helloTimeoutMs: c.LOOKOUT_PROVISION_HELLO_TIMEOUT_S * 1000,
      helloPollMs: 200,
      startCommand: c.LOOKOUT_PROVISION_START_COMMAND.trim(),
      registry,
      registryFile: new RegistryFileEditor(registry.path),
      readiness: ctx.services.optional(READINESS_GRADES),
      records,
      now: () => ctx.clock.now(),
      onStep: (deviceId, step) => {
        const message = `provisioning ${deviceId}: ${step.name} ${step.status}`;
        ctx.log.info({ device_id: deviceId, step: step.name, status: step.status }, message);
        ring?.record({ kind: 'provision', device_id: deviceId, message, details: { step: step.name, status: step.status, detail: step.detail } });
      },
    });
    if (!c.LOOKOUT_FLEET_SECRET) ctx.log.warn('no LOOKOUT_FLEET_SECRET: provisioning cannot derive device credentials');

    ctx.routes.handle<unknown, ProvisionBody>('POST', '/fleet/provision-shadow', ({ body, signal }) => {
      if (!c.LOOKOUT_FLEET_SECRET) throw new LookoutError('config_invalid', 'the hub has no fleet secret to derive device credentials from');
      return provisioner.run(body, signal);
    });
    ctx.routes.handle('GET', '/fleet/provision-shadow', () => ({ provisions: records.list() }));
    const service: FleetProvision = {
      availability: (deviceId, what) => provisioner.availability(deviceId, what),
      renewCertificate: (deviceId, signal) => provisioner.renewCertificate(deviceId, signal),
      reapplyLayer: (deviceId, layer, signal) => provisioner.reapplyLayer(deviceId, layer, signal),
    };
    ctx.services.provide(FLEET_PROVISION, service);
  },
});
