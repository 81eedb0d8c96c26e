import { z } from 'zod';
import { DeviceIdSchema } from 'lookout/core/contracts';
import { LookoutError, definePlugin, setOwn } from 'lookout/core';
import { HUB_INFO, HUB_ROUTES, HUB_SHARED } from 'lookout/hub';
import { A2A_PEERS } from '../../a2a/src/service.js';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { fleetGrade, viewOf } from './fleet-grade.js';
import { GradeStore } from './grade-store.js';
import { hubCertificates } from './hub-certificates.js';
import { ReadinessChecker } from './readiness-checker.js';
import { DeviceReadinessViewSchema, FleetGradeSchema, GradeSchema, READINESS_MODULES, type DeviceReadinessView } from './readiness-schemas.js';
import { READINESS_GRADES, type ReadinessGrades, type ReadinessSnapshot } from './service.js';

const ReadinessQuery = z.object({ device: DeviceIdSchema.optional().describe('only this device (404 target_unknown when no grade or device is known)') });
const ValidateQuery = z.object({
  target: z.string().min(1).max(256).optional().describe('device id, device address (ip or ip:port) or label such as "canary"; every known device without it'),
});

const ReadinessResponse = z.object({
  fleet: FleetGradeSchema,
  devices: z.record(z.string(), DeviceReadinessViewSchema),
  modules: z.array(z.enum(READINESS_MODULES)).describe('the graded modules, in order'),
  interval_ms: z.number().int().describe('how often every device is checked (READINESS_INTERVAL_MS)'),
  generated_at: z.string(),
});

const GradeResponse = FleetGradeSchema.extend({
  devices: z.record(z.string(), GradeSchema).describe('each graded device’s grade'),
  interval_ms: z.number().int(),
  generated_at: z.string(),
});

const ValidateResponse = ReadinessResponse.extend({
  validated: z.array(z.string()).describe('the devices checked by this request; `devices` holds their fresh grades'),
});

/**
 * Fleet readiness (spec 01): every device's modules graded ready / degraded / not_ready (or
 * not_applicable) with their evidence, by the five-minute check: on a schedule, when a device's
 * presence or plugins change, and on demand. Grades live in the hub's shared state (HUB_SHARED,
 * scope `readiness`) so that every replica serves the same ones; fleet-health reads them too.
 */
export default definePlugin({
  name: 'readiness',
  version: '1.0.0',
  core: '^1',
  description: 'Readiness grades per device and for the fleet, with evidence (GET /fleet/readiness, GET /fleet/grade, POST /fleet/validate)',
  requires: [DEVICE_REGISTRY, BUS_CACHE, DEVICE_TOOLS, HUB_SHARED],
  optionalRequires: [A2A_PEERS, HUB_ROUTES, HUB_INFO],
  provides: [READINESS_GRADES],
  config: z.object({
    /** Every device is checked this often (the spec's five-minute check). */
    READINESS_INTERVAL_MS: z.coerce.number().int().min(100).max(86_400_000).default(300_000),
    /** One device's whole check (its tool calls, peer query and port probe) is bounded by this. */
    READINESS_CHECK_TIMEOUT_MS: z.coerce.number().int().min(50).max(600_000).default(20_000),
    /** Devices checked at once. */
    READINESS_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    /**
     * The checks the hub sets off itself (rounds, changes) start at most this many a second, so that
     * a fleet saying hello at once is checked over the next seconds, not in one burst beside the
     * ingest; 50 goes through a round of 1 000 devices in 20 s. POST /fleet/validate is not held.
     */
    READINESS_CHECKS_PER_S: z.coerce.number().min(0.1).max(10_000).default(50),
    /** 1: a device whose status (presence, plugin states) or hello changes is checked again, READINESS_RECHECK_DELAY_MS after; 0: only the rounds and POST /fleet/validate check. */
    READINESS_RECHECK_ON_CHANGE: z.enum(['0', '1']).default('1'),
    READINESS_RECHECK_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
    /** The first round after the hub starts: soon, but after the devices have reconnected (their hellos are checked by themselves). */
    READINESS_START_DELAY_MS: z.coerce.number().int().min(0).max(86_400_000).default(10_000),
    /** The TCP connection to a device's ONVIF port. */
    READINESS_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(3000),
  }),
  routes: [
    {
      method: 'GET',
      path: '/fleet/readiness',
      errors: ['target_unknown'],
      summary:
        'Readiness per device and for the fleet: ready, degraded or not_ready, and per module (device_identity_fp, peer_sidecar, hermes_mesh, mcp_health, cross_a2a_federation, depth_fusion, recorder, playback, snapshot, onvif, rtsp) its grade and evidence (checked, at, value, reason)',
      query: ReadinessQuery,
      response: ReadinessResponse,
    },
    {
      method: 'GET',
      path: '/fleet/grade',
      summary: 'The fleet’s readiness grade: devices by grade, modules by grade, devices not checked yet or stale',
      response: GradeResponse,
    },
    {
      method: 'POST',
      path: '/fleet/validate',
      errors: ['target_unknown', 'device_timeout'],
      summary: 'Runs the readiness checks now, for one target or every known device, and answers the fresh grades',
      query: ValidateQuery,
      response: ValidateResponse,
    },
  ],
  start(ctx) {
    const c = ctx.config;
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const cache = ctx.services.get(BUS_CACHE);
    const shared = ctx.services.get(HUB_SHARED);
    const store = new GradeStore(shared, ctx.log);
    const staleAfterMs = 2 * c.READINESS_INTERVAL_MS + c.READINESS_CHECK_TIMEOUT_MS;
    const checker = new ReadinessChecker({
      sources: {
        cache,
        tools: ctx.services.get(DEVICE_TOOLS),
        // Looked up per check: the a2a plugin may start, fail or be restarted after this one.
        get peers() {
          return ctx.services.optional(A2A_PEERS);
        },
        get routes() {
          return ctx.services.optional(HUB_ROUTES);
        },
        connectTimeoutMs: c.READINESS_CONNECT_TIMEOUT_MS,
      },
      registry,
      store,
      shared,
      clock: ctx.clock,
      log: ctx.log,
      hubId: ctx.services.optional(HUB_INFO)?.id ?? ctx.runtime.id,
      intervalMs: c.READINESS_INTERVAL_MS,
      checkTimeoutMs: c.READINESS_CHECK_TIMEOUT_MS,
      staleAfterMs,
      concurrency: c.READINESS_CONCURRENCY,
      startsPerSecond: c.READINESS_CHECKS_PER_S,
    });
    ctx.onStop(() => checker.stop());

    const snapshot = async (): Promise<ReadinessSnapshot> => {
      const now = ctx.clock.now();
      const stored = await store.all();
      const devices = new Map<string, DeviceReadinessView>();
      for (const [id, record] of [...stored].sort(([a], [b]) => a.localeCompare(b))) devices.set(id, viewOf(record, now, staleAfterMs));
      const unchecked = checker.knownDevices().filter((id) => !stored.has(id));
      const certificates = hubCertificates(ctx.runtime.dataDir, ctx.services.optional(HUB_INFO)?.tlsCertPath, new Date(now));
      return { fleet: fleetGrade([...devices.values()], unchecked, certificates), devices };
    };
    const service: ReadinessGrades = {
      snapshot,
      validate: (ids, signal) => checker.validate(ids ?? checker.knownDevices(), signal ?? AbortSignal.timeout(c.READINESS_CHECK_TIMEOUT_MS * 2)),
    };
    ctx.services.provide(READINESS_GRADES, service);

    // A device that comes, goes, or whose plugins change is graded again soon, not at the next round.
    const lastSeen = new Map<string, string>();
    const onChange = c.READINESS_RECHECK_ON_CHANGE === '1';
    const offStatus = cache.on('status', (m) => {
      if (!onChange) return;
      const plugins = Array.isArray(m.message.plugins) ? (m.message.plugins as { name?: unknown; state?: unknown }[]) : [];
      const signature = `${String(m.message.state)}|${plugins.map((p) => `${String(p.name)}=${String(p.state)}`).join(',')}`;
      if (lastSeen.get(m.deviceId) === signature) return;
      lastSeen.set(m.deviceId, signature);
      checker.checkSoon(m.deviceId, c.READINESS_RECHECK_DELAY_MS);
    });
    const offHello = cache.on('hello', (m) => {
      if (onChange) checker.checkSoon(m.deviceId, c.READINESS_RECHECK_DELAY_MS);
    });
    ctx.onStop(() => {
      offStatus();
      offHello();
    });
    ctx.clock.setInterval(() => void checker.scheduledRound(), c.READINESS_INTERVAL_MS);
    // The devices the hub restored from its state are graded soon after start, not after a whole interval.
    ctx.onStarted(() => {
      ctx.clock.setTimeout(() => void checker.runRound(), c.READINESS_START_DELAY_MS);
    });

    const answer = async (only?: string[]) => {
      const snap = await snapshot();
      const devices: Record<string, DeviceReadinessView> = {};
      for (const [id, view] of snap.devices) if (!only || only.includes(id)) setOwn(devices, id, view);
      return {
        fleet: snap.fleet,
        devices,
        modules: [...READINESS_MODULES],
        interval_ms: c.READINESS_INTERVAL_MS,
        generated_at: new Date(ctx.clock.now()).toISOString(),
      };
    };

    ctx.routes.handle<z.output<typeof ReadinessQuery>>('GET', '/fleet/readiness', async ({ query }) => {
      const out = await answer(query.device !== undefined ? [query.device] : undefined);
      if (query.device !== undefined && !(query.device in out.devices)) {
        const known = checker.knownDevices().includes(query.device);
        throw new LookoutError(
          'target_unknown',
          known
            ? `${query.device} has not been checked yet: POST /fleet/validate?target=${query.device} checks it now`
            : `the hub knows no device ${query.device}`,
          { details: { device: query.device, known } },
        );
      }
      return out;
    });

    ctx.routes.handle('GET', '/fleet/grade', async () => {
      const snap = await snapshot();
      const devices: Record<string, z.output<typeof GradeSchema>> = {};
      for (const [id, view] of snap.devices) setOwn(devices, id, view.grade);
      return { ...snap.fleet, devices, interval_ms: c.READINESS_INTERVAL_MS, generated_at: new Date(ctx.clock.now()).toISOString() };
    });

    ctx.routes.handle<z.output<typeof ValidateQuery>>('POST', '/fleet/validate', async ({ query, signal }) => {
      // registry.resolve answers target_unknown (404) for a target no registered device matches.
      const ids = query.target !== undefined ? [registry.resolve(query.target).deviceId] : checker.knownDevices();
      const fresh = await checker.validate(ids, signal);
      return { ...(await answer(fresh.map((r) => r.device_id))), validated: fresh.map((r) => r.device_id) };
    });
  },
});
