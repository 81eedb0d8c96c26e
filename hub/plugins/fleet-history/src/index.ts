import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { DeviceIdSchema, queryInteger } from 'lookout/core/contracts';
import { LookoutError, definePlugin } from 'lookout/core';
import { HUB_INFO } from 'lookout/hub';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { HistoryRecorder } from './history-recorder.js';
import { Sources } from './history-params.js';
import {
  BucketSchema,
  HISTORY_ROUTES,
  HistoryRangeQuery,
  bucketsAnswer,
  eventsAnswer,
  lastSeenAnswer,
  peopleAnswer,
  type EventsQuery,
  type HistoryRouteDeps,
  type LastSeenQuery,
  type PeopleQuery,
} from './history-routes.js';
import { SqliteHistoryStore } from './sqlite-history-store.js';
import { HistoryRings } from './history-rings.js';
import { readingOfDets, readingOfTelemetry } from './reading-of.js';
import { FLEET_HISTORY, type FleetHistory, type HistorySample } from './service.js';

const HistoryQuery = z.object({
  device: DeviceIdSchema.max(128).describe('the device whose history to read'),
  since: queryInteger(0, Number.MAX_SAFE_INTEGER).optional().describe('epoch ms: only samples newer than this (what a plot already has)'),
  ...HistoryRangeQuery,
});

const SampleSchema = z.object({
  t: z.number().int().describe('epoch ms of the step’s newest reading'),
  die_temp_c: z.number().nullable(),
  camera_fps: z.number().nullable(),
  detection_fps: z.number().nullable(),
  person_count: z.number().nullable().describe('the most persons of the step'),
});

const HistoryResponse = z.object({
  device_id: z.string(),
  window_s: z.number().int(),
  step_s: z.number(),
  samples: z.array(SampleSchema).describe('oldest first'),
  from: z.number().int().optional().describe('with from/to/bucket: the buckets’ span (epoch ms)'),
  to: z.number().int().optional(),
  bucket_s: z.number().int().optional(),
  buckets: z.array(BucketSchema).optional().describe('with from/to/bucket: per-bucket counts from the stored history, oldest first'),
  sources: Sources.optional(),
});

/**
 * The hub's bounded per-device history of telemetry (die temperature, camera and detection rates,
 * person count): one sample per step over a window, kept in memory. What the console plots; other
 * plugins read it through FLEET_HISTORY.
 */
export default definePlugin({
  name: 'fleet-history',
  version: '1.0.0',
  core: '^1',
  description:
    'Per-device history: telemetry for plots over the last hour in memory, and per device and minute the devices’ counts, thermal state, storage health, presence, incidents with their understanding, OCR reads, chunks and audits in SQLite for days',
  requires: [BUS_CACHE],
  optionalRequires: [DEVICE_REGISTRY, DEBUG_RING, HUB_INFO],
  provides: [FLEET_HISTORY],
  config: z.object({
    /** How far back the history reaches. */
    LOOKOUT_HISTORY_WINDOW_S: z.coerce.number().int().min(10).max(86_400).default(3600),
    /** One sample per device per step (readings within a step update it). */
    LOOKOUT_HISTORY_STEP_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
    /** Devices whose hour of telemetry is held in memory; past that, one silent for a minute makes room for a new one, else the new one has none. */
    LOOKOUT_HISTORY_MAX_DEVICES: z.coerce.number().int().min(1).max(100_000).default(1000),
    /** How long a device held in memory must have been silent before a new one takes its place. */
    LOOKOUT_HISTORY_FORGET_AFTER_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
    /** The history database (SQLite): a file path, default `<data dir>/fleet-history.sqlite`; `:memory:` keeps it in memory (lost at a restart); `off` keeps only the hour of telemetry. */
    LOOKOUT_HISTORY_DB: z.string().min(1).optional(),
    /** Days the database keeps; older minutes and events are dropped. */
    LOOKOUT_HISTORY_RETENTION_DAYS: z.coerce.number().min(0.000001).max(3650).default(30),
    /** Size bound of the database in MiB: past it the oldest days go. */
    LOOKOUT_HISTORY_MAX_MB: z.coerce.number().min(1).max(1_000_000).default(1024),
    /** How often the gathered minutes are written (one transaction each). */
    LOOKOUT_HISTORY_FLUSH_MS: z.coerce.number().int().min(50).max(600_000).default(5000),
    /** How often retention and size are enforced. */
    LOOKOUT_HISTORY_TRIM_MS: z.coerce.number().int().min(100).max(86_400_000).default(600_000),
  }),
  routes: [
    {
      method: 'GET',
      path: '/fleet/history',
      errors: ['target_unknown', 'bad_request', 'service_unavailable'],
      summary: "A device's telemetry history over the window (one sample per step, oldest first): die temperature, camera and detection fps, person count",
      query: HistoryQuery,
      response: HistoryResponse,
    },
    ...HISTORY_ROUTES,
  ],
  start(ctx) {
    const cache = ctx.services.get(BUS_CACHE);
    const { LOOKOUT_HISTORY_WINDOW_S: windowS, LOOKOUT_HISTORY_STEP_MS: stepMs, LOOKOUT_HISTORY_MAX_DEVICES: maxDevices } = ctx.config;
    const capacity = Math.ceil((windowS * 1000) / stepMs);
    const rings = new HistoryRings(capacity, stepMs, maxDevices, ctx.config.LOOKOUT_HISTORY_FORGET_AFTER_MS);
    const listeners = new Set<(deviceId: string, sample: HistorySample) => void>();

    ctx.onStop(
      cache.on('telemetry', (m) => {
        const sample = rings.ringOf(m.deviceId, m.receivedAt)?.add(readingOfTelemetry(m.message, m.receivedAt, cache.personCount(m.deviceId)));
        if (sample) for (const listener of listeners) listener(m.deviceId, { ...sample });
      }),
    );
    // Person counts come at the detector's rate: they only raise the step's maximum, without telling anyone.
    ctx.onStop(cache.on('dets', (m) => void rings.ringOf(m.deviceId, m.receivedAt)?.add(readingOfDets(m.message, m.receivedAt))));

    const history: FleetHistory = {
      windowMs: windowS * 1000,
      stepMs,
      samples(deviceId, sinceMs) {
        const ring = rings.get(deviceId);
        if (!ring) return undefined;
        const cutoff = Date.now() - windowS * 1000;
        return ring.list(Math.max(sinceMs ?? -Infinity, cutoff));
      },
      deviceIds: () => rings.deviceIds(),
      onSample(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    ctx.services.provide(FLEET_HISTORY, history);

    const dbSetting = ctx.config.LOOKOUT_HISTORY_DB;
    const divided = ctx.services.optional(HUB_INFO)?.dividedApply;
    const recorder =
      dbSetting === 'off'
        ? undefined
        : new HistoryRecorder(
            cache,
            openStore(dbSetting === ':memory:' ? dbSetting : dbSetting ? resolve(dbSetting) : join(resolve(ctx.runtime.dataDir), 'fleet-history.sqlite')),
            {
              flushMs: ctx.config.LOOKOUT_HISTORY_FLUSH_MS,
              trimMs: ctx.config.LOOKOUT_HISTORY_TRIM_MS,
              retentionDays: ctx.config.LOOKOUT_HISTORY_RETENTION_DAYS,
              maxBytes: ctx.config.LOOKOUT_HISTORY_MAX_MB * 1024 * 1024,
              now: () => ctx.clock.now(),
              warn: (message, fields) => ctx.log.warn(fields, message),
              ...(divided ? { divided } : {}),
            },
          );
    if (recorder) ctx.onStop(() => recorder.stop());
    // The incidents' understandings and the audits (svc-agent, remediation, provisioning) reach the
    // ring as they are recorded; a listener sees each (a poll of the ring would lose those its
    // repeat bound leaves out or a burst pushes out between two polls, and see restored ones again).
    const ring = ctx.services.optional(DEBUG_RING);
    if (recorder && ring) ctx.onStop(ring.onRecord((event, atMs) => recorder.noteRing(event, atMs)));
    const registry = ctx.services.optional(DEVICE_REGISTRY);
    const deps: HistoryRouteDeps = {
      store: () => {
        if (!recorder) throw new LookoutError('service_unavailable', 'the fleet history database is off (LOOKOUT_HISTORY_DB=off)');
        return recorder.store;
      },
      flush: () => recorder?.flushNow(),
      registry,
      knows: (id) => cache.device(id) !== undefined || (recorder?.store.deviceIds().includes(id) ?? false),
      now: () => ctx.clock.now(),
      maxSpanDays: Math.max(1, Math.ceil(ctx.config.LOOKOUT_HISTORY_RETENTION_DAYS)),
    };

    ctx.routes.handle<z.output<typeof HistoryQuery>>('GET', '/fleet/history', ({ query }) => {
      const ranged = query.from !== undefined || query.to !== undefined || query.bucket !== undefined;
      let samples = history.samples(query.device, query.since);
      const stored = ranged && recorder !== undefined && recorder.store.deviceIds().includes(query.device);
      if (samples === undefined && cache.device(query.device) === undefined && !stored) {
        throw new LookoutError('target_unknown', `the hub has no telemetry of a device ${query.device}`, { details: { device_id: query.device } });
      }
      const base = { device_id: query.device, window_s: windowS, step_s: stepMs / 1000 };
      if (!ranged) return { ...base, samples: samples ?? [] };
      const range = bucketsAnswer(query.device, query, deps);
      samples = (samples ?? []).filter((s) => s.t >= range.from && s.t < range.to);
      return { ...base, samples, ...range };
    });
    ctx.routes.handle<z.output<typeof PeopleQuery>>('GET', '/fleet/history/people', ({ query }) => peopleAnswer(query, deps));
    ctx.routes.handle<z.output<typeof LastSeenQuery>>('GET', '/fleet/history/last-seen', ({ query }) => lastSeenAnswer(query, deps));
    ctx.routes.handle<z.output<typeof EventsQuery>>('GET', '/fleet/history/events', ({ query }) => eventsAnswer(query, deps));
  },
});

function openStore(file: string): SqliteHistoryStore {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  return new SqliteHistoryStore(file);
}
