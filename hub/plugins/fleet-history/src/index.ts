import { z } from 'zod';
import { DeviceIdSchema, queryInteger } from 'lookout/core/contracts';
import { LookoutError, definePlugin } from 'lookout/core';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { HistoryRing } from './history-ring.js';
import { readingOfDets, readingOfTelemetry } from './reading-of.js';
import { FLEET_HISTORY, type FleetHistory, type HistorySample } from './service.js';

const HistoryQuery = z.object({
  device: DeviceIdSchema.max(128).describe('the device whose history to read'),
  since: queryInteger(0, Number.MAX_SAFE_INTEGER).optional().describe('epoch ms: only samples newer than this (what a plot already has)'),
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
  description: 'A bounded per-device history of telemetry (die temperature, camera and detection fps, person count) for plots over the last hour',
  requires: [BUS_CACHE],
  provides: [FLEET_HISTORY],
  config: z.object({
    /** How far back the history reaches. */
    LOOKOUT_HISTORY_WINDOW_S: z.coerce.number().int().min(10).max(86_400).default(3600),
    /** One sample per device per step (readings within a step update it). */
    LOOKOUT_HISTORY_STEP_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
    /** Devices held; past that, the one silent longest is forgotten. */
    LOOKOUT_HISTORY_MAX_DEVICES: z.coerce.number().int().min(1).max(100_000).default(1000),
  }),
  routes: [
    {
      method: 'GET',
      path: '/fleet/history',
      errors: ['target_unknown'],
      summary: "A device's telemetry history over the window (one sample per step, oldest first): die temperature, camera and detection fps, person count",
      query: HistoryQuery,
      response: HistoryResponse,
    },
  ],
  start(ctx) {
    const cache = ctx.services.get(BUS_CACHE);
    const { LOOKOUT_HISTORY_WINDOW_S: windowS, LOOKOUT_HISTORY_STEP_MS: stepMs, LOOKOUT_HISTORY_MAX_DEVICES: maxDevices } = ctx.config;
    const capacity = Math.ceil((windowS * 1000) / stepMs);
    const rings = new Map<string, HistoryRing>();
    const listeners = new Set<(deviceId: string, sample: HistorySample) => void>();

    const ringOf = (deviceId: string): HistoryRing => {
      let ring = rings.get(deviceId);
      if (ring) {
        // Map order is recency order: the first entry is the device silent longest.
        rings.delete(deviceId);
        rings.set(deviceId, ring);
        return ring;
      }
      if (rings.size >= maxDevices) rings.delete(rings.keys().next().value!);
      ring = new HistoryRing(capacity, stepMs);
      rings.set(deviceId, ring);
      return ring;
    };

    ctx.onStop(
      cache.on('telemetry', (m) => {
        const sample = ringOf(m.deviceId).add(readingOfTelemetry(m.message, m.receivedAt, cache.view(m.deviceId, m.receivedAt)?.person_count ?? null));
        for (const listener of listeners) listener(m.deviceId, { ...sample });
      }),
    );
    // Person counts come at the detector's rate: they only raise the step's maximum, without telling anyone.
    ctx.onStop(cache.on('dets', (m) => void ringOf(m.deviceId).add(readingOfDets(m.message, m.receivedAt))));

    const history: FleetHistory = {
      windowMs: windowS * 1000,
      stepMs,
      samples(deviceId, sinceMs) {
        const ring = rings.get(deviceId);
        if (!ring) return undefined;
        const cutoff = Date.now() - windowS * 1000;
        return ring.list(Math.max(sinceMs ?? -Infinity, cutoff));
      },
      deviceIds: () => [...rings.keys()],
      onSample(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    ctx.services.provide(FLEET_HISTORY, history);

    ctx.routes.handle<z.output<typeof HistoryQuery>>('GET', '/fleet/history', ({ query }) => {
      const samples = history.samples(query.device, query.since);
      if (samples === undefined && cache.device(query.device) === undefined) {
        throw new LookoutError('target_unknown', `the hub has no telemetry of a device ${query.device}`, { details: { device_id: query.device } });
      }
      return { device_id: query.device, window_s: windowS, step_s: stepMs / 1000, samples: samples ?? [] };
    });
  },
});
