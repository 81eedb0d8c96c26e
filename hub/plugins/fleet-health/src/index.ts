import { z } from 'zod';
import { DeviceIdSchema } from 'lookout/core/contracts';
import { definePlugin, setOwn } from 'lookout/core';
import { HUB_INFO, HUB_METRICS } from 'lookout/hub';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { READINESS_GRADES, type ReadinessSnapshot } from '../../readiness/src/service.js';
import { deviceHealth, type DeviceHealthView } from './device-health.js';
import { readinessOf, type ReadinessView } from './shared-readiness.js';
import { deviceGaugeSamples } from './device-gauge-samples.js';

/** A device in /fleet/health: its readiness is the readiness plugin's grade when that runs. */
type FleetDeviceView = Omit<DeviceHealthView, 'readiness'> & { readiness: ReadinessView };

const HealthQuery = z.object({ device: DeviceIdSchema.optional().describe('only this device') });

const PluginProblemSchema = z.object({ name: z.string(), code: z.string().nullable(), message: z.string().nullable() });

const DeviceHealthSchema = z.looseObject({
  device_id: z.string(),
  presence: z.enum(['online', 'offline', 'stale', 'unknown']),
  online: z.boolean(),
  stale: z.boolean(),
  age_s: z.number().nullable(),
  thermal_state: z.string().nullable(),
  die_temp_c: z.number().nullable(),
  storage_health: z.string().nullable().describe('OK, WARNING, CRITICAL from the latest health message'),
  storage: z.looseObject({}).nullable(),
  recorder: z.looseObject({
    status: z
      .enum(['recording', 'stalled', 'none'])
      .nullable()
      .describe('from its chunks: recording (newest chunk recent), stalled (old), none (no chunk); null when not known (see reason)'),
    reason: z.string().nullable().describe('why status is not recording'),
    chunk_count: z.number().nullable(),
    latest_chunk: z.looseObject({}).nullable(),
    last_health_at: z.string().nullable(),
  }),
  readiness: z.object({
    grade: z
      .enum(['ready', 'degraded', 'not_ready'])
      .describe('the grade GET /fleet/readiness serves (source readiness); from the checks below without that plugin'),
    source: z.enum(['readiness', 'fleet-health']),
    checked_at: z.string().nullable().describe('when the readiness checks graded it; null when not yet, or without that plugin'),
    stale: z.boolean().nullable(),
    reason: z.string().nullable(),
    modules: z
      .record(z.string(), z.enum(['ready', 'degraded', 'not_ready', 'not_applicable']))
      .nullable()
      .describe('each module’s grade (GET /fleet/readiness has the evidence)'),
    checks: z.record(z.string(), z.boolean()).describe('what the bus cache says now; reachable: the registry gives it a tool URL and it is online'),
    failing: z.array(z.string()).describe('the checks that fail'),
  }),
  plugins: z
    .object({ failed: z.array(PluginProblemSchema), skipped: z.array(PluginProblemSchema) })
    .describe('plugins the device reports failed or skipped, with their code and message'),
});

const FleetHealthResponse = z.object({
  fleet: z.object({
    status: z.enum(['ok', 'degraded', 'critical', 'empty']),
    device_count: z.number().int(),
    online: z.number().int(),
    offline: z.number().int(),
    stale: z.number().int(),
    unknown: z.number().int(),
    storage_health: z.record(z.string(), z.number().int()),
    readiness: z.record(z.string(), z.number().int()),
  }),
  devices: z.record(z.string(), DeviceHealthSchema),
  state: z
    .object({ backend: z.enum(['memory', 'redis']), replica: z.boolean(), stale: z.boolean(), stale_since: z.string().nullable() })
    .describe('where the state hub replicas share lives; stale while this replica answers from its local copy (Redis unreachable)'),
  stale_sec: z.number().int(),
  generated_at: z.string(),
});

/** GET /fleet/health: recorder, storage and readiness health per device and for the fleet. */
export default definePlugin({
  name: 'fleet-health',
  version: '1.0.0',
  core: '^1',
  description: 'Recorder, storage and readiness health per device and for the fleet (GET /fleet/health)',
  requires: [BUS_CACHE, DEVICE_REGISTRY],
  optionalRequires: [READINESS_GRADES, HUB_INFO, HUB_METRICS],
  routes: [
    {
      method: 'GET',
      path: '/fleet/health',
      summary:
        'Recorder, storage and readiness health per device and for the fleet (readiness: the grades of GET /fleet/readiness when the readiness plugin runs)',
      query: HealthQuery,
      response: FleetHealthResponse,
    },
  ],
  start(ctx) {
    const cache = ctx.services.get(BUS_CACHE);
    const registry = ctx.services.get(DEVICE_REGISTRY);
    // The hub's /metrics per-device gauges: the devices of /fleet/health, read at each scrape.
    const unsetGauges = ctx.services.optional(HUB_METRICS)?.setDeviceSource(() => deviceGaugeSamples(cache, registry, Date.now()));
    if (unsetGauges) ctx.onStop(unsetGauges);
    ctx.routes.handle<z.output<typeof HealthQuery>>('GET', '/fleet/health', async ({ query }) => {
      const grades = ctx.services.optional(READINESS_GRADES);
      const snapshot: ReadinessSnapshot | undefined = grades ? await grades.snapshot() : undefined;
      const now = Date.now();
      const registered = new Map(registry.list().map((d) => [d.deviceId, d]));
      const ids = query.device !== undefined ? [query.device] : [...new Set([...cache.deviceIds(), ...registered.keys()])].sort();
      const views = ids
        .filter((id) => cache.device(id) || registered.has(id))
        .map((id): FleetDeviceView => {
          const local = deviceHealth(id, cache.device(id), cache.view(id, now), registered.get(id), now);
          return { ...local, readiness: readinessOf(local.readiness, snapshot ? { stored: snapshot.devices.get(id) } : undefined) };
        });
      const devices: Record<string, FleetDeviceView> = {};
      for (const v of views) setOwn(devices, v.device_id, v);
      const { backend, replica, stale, stale_since } = ctx.services.optional(HUB_INFO)?.sharedState?.() ?? {
        backend: 'memory' as const,
        replica: false,
        stale: false,
        stale_since: null,
      };
      return {
        fleet: summarise(views),
        devices,
        state: { backend, replica, stale, stale_since },
        stale_sec: cache.staleSec,
        generated_at: new Date(now).toISOString(),
      };
    });
  },
});

function summarise(list: FleetDeviceView[]): z.output<typeof FleetHealthResponse>['fleet'] {
  const count = (pred: (d: FleetDeviceView) => boolean) => list.filter(pred).length;
  const storage: Record<string, number> = { OK: 0, WARNING: 0, CRITICAL: 0, unknown: 0 };
  const readiness: Record<string, number> = { ready: 0, degraded: 0, not_ready: 0 };
  for (const d of list) {
    const key = d.storage_health ?? 'unknown';
    storage[key] = (storage[key] ?? 0) + 1;
    readiness[d.readiness.grade] += 1;
  }
  const offline = count((d) => d.presence === 'offline');
  const status = list.length === 0 ? 'empty' : (storage.CRITICAL ?? 0) > 0 ? 'critical' : readiness.ready === list.length ? 'ok' : 'degraded';
  return {
    status,
    device_count: list.length,
    online: count((d) => d.presence === 'online'),
    offline,
    stale: count((d) => d.presence === 'stale'),
    unknown: count((d) => d.presence === 'unknown'),
    storage_health: storage,
    readiness,
  };
}
