import { join, resolve } from 'node:path';
import { z } from 'zod';
import { DeviceIdSchema, RegistryRecordSchema, RegistryShadowSchema, RoleLabelSchema, type HelloMessage } from 'lookout/core/contracts';
import { LookoutError, definePlugin } from 'lookout/core';
import { DeviceNetworks, lanAddress } from 'lookout/lib/net';
import { HUB_INFO, HUB_STATE } from 'lookout/hub';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { HubDeviceRegistry } from './device-registry.js';
import { REGISTRY_STATE_KEY, REGISTRY_STATE_MAX_DEVICES, parseRegistryState } from './registry-state.js';
import { RegisteredRecords } from './registered-records.js';
import { DEVICE_ADMISSION, DEVICE_REGISTRY, type RegisteredDevice } from './service.js';

/** "registered by hello" ring records one per device up to this many a second; past it, one per second names the rest. */
const REGISTERED_RECORDS_BURST = 20;
const REGISTERED_RECORDS_INTERVAL_MS = 1000;

const HubShadowSchema = RegistryShadowSchema.extend({
  source: z.enum(['file', 'hello', 'file+hello']),
  reachable: z.boolean().describe('the hub may contact it (named in the registry file, or an address inside the device networks)'),
  tool_url: z.string().nullable(),
  unreachable_reason: z.string().optional(),
  ports: z.record(z.string(), z.unknown()).nullable(),
  online: z.boolean(),
  last_hello_at: z.string().nullable(),
  restored: z.boolean().optional().describe('its hello was announced before the hub restarted (reloaded from the hub state), none since'),
  connected_from: z
    .string()
    .optional()
    .describe('the address its bus connection came from when it said hello (embedded broker): the hub contacts it there, not at the hello’s ips'),
  refused_labels: z
    .array(z.string())
    .optional()
    .describe('labels its hello announces that it does not hold: another device claimed them first, or the registry file gives them'),
  image: z.string().optional(),
  layer: z.string().optional(),
  cert_not_after: z.string().optional().describe('when its certificate ends, as its hello announced (cert_not_after); readiness warns 30 days ahead'),
  ssh: z
    .object({ host: z.string(), port: z.number().int(), user: z.string(), recordings_root: z.string() })
    .nullable()
    .optional()
    .describe('where the hub reaches it over SSH (registry file ssh_host, ssh_port, ssh_user, recordings_root); null: not contacted'),
});

const RegistryResponse = RegistryRecordSchema.extend({
  shadows: z.array(HubShadowSchema),
  device_networks: z.array(z.string()),
  warnings: z.array(z.string()).optional().describe('present when the registry file on disk is not the one in use (a broken edit)'),
  label_claims: z
    .object({
      holders: z
        .array(z.object({ label: z.string(), device_id: z.string(), since: z.string() }))
        .describe('labels only hellos announce, each held by the first device that claimed it'),
      refused: z.number().int().describe('hello labels refused since the hub started (held by another device, or given by the registry file)'),
      recent_refusals: z
        .array(
          z.object({ device_id: z.string(), label: z.string(), held_by: z.string().optional(), reason: z.enum(['held', 'bound_reached']), at: z.string() }),
        )
        .describe('the latest refusal of each device and label, newest last (at most 50)'),
    })
    .describe('DELETE /fleet/registry/labels/:label releases a label (or ?to=<device> gives it to that device)'),
});

const LabelReleaseQuery = z.object({
  to: DeviceIdSchema.optional().describe('give the label to this device (its hello must announce it) instead of freeing it'),
});

const LabelReleaseResponse = z.object({
  label: z.string(),
  released_from: z.string().nullable().describe('the device that held it, null when none did'),
  holder: z.string().nullable().describe('the device holding it now (`to`), null when free: the next hello announcing it claims it'),
});

const RegistryQuery = z.object({
  label: RoleLabelSchema.optional().describe('only devices carrying this label'),
  device: DeviceIdSchema.optional().describe('only this device'),
});

/** The fleet registry of spec 01: the registry file merged with hello announcements. */
export default definePlugin({
  name: 'registry',
  version: '1.0.0',
  core: '^1',
  description: 'Registry file merged with hello announcements; who the hub may contact (GET /fleet/registry)',
  requires: [BUS_CACHE, DEBUG_RING, DEVICE_ADMISSION],
  optionalRequires: [HUB_STATE, HUB_INFO],
  config: z.object({
    /** Set: the file must exist. Unset: `<data dir>/registry.json`, used when present. */
    LOOKOUT_HUB_REGISTRY: z.string().min(1).optional(),
    LOOKOUT_HUB_DEVICE_NETWORKS: z.string().min(1).default('127.0.0.0/8'),
    LOOKOUT_HUB_BUS_ID: z.string().min(1).default('lookout'),
    LOOKOUT_HUB_LAN_IP: z.string().min(1).optional(),
  }),
  provides: [DEVICE_REGISTRY],
  routes: [
    {
      method: 'GET',
      path: '/fleet/registry',
      summary: 'Registry record: registry (bus_id, devices), vms_lan_ip, shadows, path',
      query: RegistryQuery,
      response: RegistryResponse,
    },
    {
      method: 'DELETE',
      path: '/fleet/registry/labels/:label',
      params: { label: 'the label to release, as hellos announce it' },
      errors: ['not_found', 'target_unknown'],
      summary:
        'Releases a label a hello claimed (the first device to claim a label only hellos announce keeps it): free for the next hello, or given to ?to=<device>',
      query: LabelReleaseQuery,
      response: LabelReleaseResponse,
    },
  ],
  async start(ctx) {
    const cfg = ctx.config;
    const cache = ctx.services.get(BUS_CACHE);
    const ring = ctx.services.get(DEBUG_RING);
    const isOnline = (id: string) => {
      const d = cache.device(id);
      return d ? cache.isOnline(d.deviceId) : false;
    };
    const registeredRecords = new RegisteredRecords({
      record: (r) => ring.record(r),
      burst: REGISTERED_RECORDS_BURST,
      intervalMs: REGISTERED_RECORDS_INTERVAL_MS,
      clock: ctx.clock,
    });
    const registry = new HubDeviceRegistry({
      path: cfg.LOOKOUT_HUB_REGISTRY ? resolve(cfg.LOOKOUT_HUB_REGISTRY) : join(resolve(ctx.runtime.dataDir), 'registry.json'),
      required: cfg.LOOKOUT_HUB_REGISTRY !== undefined,
      networks: DeviceNetworks.parse(cfg.LOOKOUT_HUB_DEVICE_NETWORKS),
      busId: cfg.LOOKOUT_HUB_BUS_ID,
      lanIp: cfg.LOOKOUT_HUB_LAN_IP ?? lanAddress(),
      isOnline,
      // The embedded broker knows where each client connects from; with an external broker this is undefined.
      connectedFrom: (id) => ctx.services.optional(HUB_INFO)?.busClientAddress?.(id),
      onEvent: ({ registered, ...e }) => (registered ? registeredRecords.add(e) : ring.record(e.device_id ? e : { kind: e.kind, message: e.message })),
    });
    ctx.onStop(() => registeredRecords.flush());
    // The hellos announced before a restart (the cache restores its entries; this, who they are and where).
    const store = ctx.services.optional(HUB_STATE);
    const saved = store?.keep(REGISTRY_STATE_KEY, () => ({
      hellos: registry.savedHellos().slice(0, REGISTRY_STATE_MAX_DEVICES),
      labels: registry.labels.bindings(),
    }));
    if (store) {
      const loaded = await store.load(REGISTRY_STATE_KEY, parseRegistryState);
      if (loaded.value) registry.restore(loaded.value.hellos, loaded.value.labels);
      if (loaded.warning) {
        ctx.log.warn(loaded.warning);
        ring.record({ kind: 'hub', message: loaded.warning });
      }
    }
    if (saved) ctx.onStop(() => saved.flush());
    ctx.services.provide(DEVICE_REGISTRY, registry);
    // The devices the file names get cache entries before (or without) a hello; made-up ids do not.
    ctx.onStop(ctx.services.get(DEVICE_ADMISSION).admitWhen((id) => registry.namedInFile(id)));
    // Hellos the cache already holds (none at a normal start) and every new one.
    for (const id of cache.deviceIds()) {
      const latest = cache.device(id)?.latest.get('hello');
      // A restored cache holds the hellos the registry restored too: only a newer one is news.
      if (latest && latest.receivedAt > (registry.get(id)?.lastHelloAt ?? -1)) registry.hello(latest.message as HelloMessage, latest.receivedAt);
    }
    const off = cache.on('hello', (m) => {
      // The cache took it only once valid against the hello contract (HelloMessageSchema): not parsed again.
      registry.hello(m.message as HelloMessage, m.receivedAt);
      saved?.changed();
    });
    ctx.onStop(off);

    ctx.routes.handle<z.output<typeof RegistryQuery>>('GET', '/fleet/registry', ({ query }) => {
      // Read first: it looks at the file on disk, so the rest of the answer is of the file it names.
      const warning = registry.fileWarning;
      const busId = registry.busId;
      const devices = registry
        .list()
        .filter((d) => (query.label === undefined || d.labels.includes(query.label)) && (query.device === undefined || d.deviceId === query.device));
      return {
        registry: {
          bus_id: busId,
          devices: devices.map((d) => ({
            device_id: d.deviceId,
            source: d.source,
            labels: d.labels,
            roles: d.roles,
            ips: d.ips,
            reachable: d.toolUrl !== null,
          })),
        },
        vms_lan_ip: registry.lanIp,
        shadows: devices.map((d) => shadow(d, busId, isOnline(d.deviceId))),
        path: registry.path,
        device_networks: [...registry.networks.cidrs],
        ...(warning !== undefined ? { warnings: [warning] } : {}),
        label_claims: {
          holders: registry.labels.bindings().map((b) => ({ label: b.label, device_id: b.device_id, since: new Date(b.at).toISOString() })),
          refused: registry.labels.refused,
          recent_refusals: registry.labels
            .recentRefusals()
            .slice(-50)
            .map((r) => ({ ...r, at: new Date(r.at).toISOString() })),
        },
      };
    });

    ctx.routes.handle<z.output<typeof LabelReleaseQuery>>('DELETE', '/fleet/registry/labels/:label', ({ params, query }) => {
      const label = params.label ?? '';
      const before = registry.labels.holder(label);
      if (query.to === undefined && before === undefined) {
        throw new LookoutError('not_found', `no device holds the label ${label} by hello`, { details: { label } });
      }
      const releasedFrom = query.to === undefined ? registry.releaseLabel(label) : registry.assignLabel(label, query.to, ctx.clock.now());
      ring.record({
        kind: 'registry',
        message:
          query.to === undefined
            ? `label ${label} released from ${releasedFrom}`
            : `label ${label} given to ${query.to}${releasedFrom ? ` (was ${releasedFrom})` : ''}`,
      });
      saved?.changed();
      return { label, released_from: releasedFrom ?? null, holder: query.to ?? null };
    });
  },
});

function shadow(d: RegisteredDevice, busId: string, online: boolean): z.output<typeof HubShadowSchema> {
  const s: z.output<typeof HubShadowSchema> = {
    device_id: d.deviceId,
    ips: d.ips,
    labels: d.labels,
    roles: d.roles,
    bus_id: busId,
    source: d.source,
    reachable: d.toolUrl !== null,
    tool_url: d.toolUrl,
    ports: d.ports,
    online,
    last_hello_at: d.lastHelloAt === null ? null : new Date(d.lastHelloAt).toISOString(),
  };
  if (d.unreachableReason) s.unreachable_reason = d.unreachableReason;
  if (d.restored) s.restored = true;
  if (d.connectedFrom) s.connected_from = d.connectedFrom;
  if (d.refusedLabels) s.refused_labels = d.refusedLabels;
  if (d.image) s.image = d.image;
  if (d.layer) s.layer = d.layer;
  if (d.certNotAfter) s.cert_not_after = d.certNotAfter;
  if (d.ssh !== undefined) s.ssh = d.ssh && { host: d.ssh.host, port: d.ssh.port, user: d.ssh.user, recordings_root: d.ssh.recordingsRoot };
  return s;
}
