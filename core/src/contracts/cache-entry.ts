import { z } from 'zod';
import { DetectionSchema } from './detection.js';
import { NonNegativeIntSchema, TimestampSchema } from './common.js';
import { StatusMessageSchema } from './status-message.js';
import { DETECTION_STATES, TelemetryMessageSchema } from './telemetry-message.js';

/**
 * One device of `GET /fleet/mqtt/latest` (spec 01, "Per-device cache entry"). `payload` is the
 * latest telemetry message (so `payload.telemetry.die_temp` and `.fps`); `status` and `payload`
 * are null until the first valid message. `age_s` and `stale` are ours: age of the newest
 * message and whether it exceeds `stale_sec`; `detection` and `suspended_since` say whether the
 * device detects (a suspended detector is never shown as a frozen or an empty scene). Entries of recent_chunks and anomaly_alerts are
 * objects whose fields the spec does not show.
 */
export const CacheEntrySchema = z
  .looseObject({
    status: StatusMessageSchema.nullable(),
    payload: TelemetryMessageSchema.nullable(),
    dets: z.array(DetectionSchema),
    recent_chunks: z.array(z.looseObject({})),
    anomaly_alerts: z.array(z.looseObject({})),
    stale_sec: NonNegativeIntSchema.describe('staleness threshold, 120 by default'),
    age_s: z.number().nonnegative(),
    stale: z.boolean(),
    detection: z
      .enum(DETECTION_STATES)
      .nullable()
      .optional()
      .describe('what the device last said of its detector; while suspended, dets is empty and person_count null: not an empty scene'),
    suspended_since: TimestampSchema.nullable().optional().describe('when the current suspension began'),
    offline_since: TimestampSchema.nullable().optional().describe('when the hub learned the device went offline (its last-will or offline status arrived)'),
    last_seen_at: TimestampSchema.nullable().optional().describe('when the device itself was last heard (a last-will is the broker’s word, not the device’s)'),
  })
  .describe('per-device cache entry (spec 01)');
/** A per-device cache entry as parsed (see CacheEntrySchema). */
export type CacheEntry = z.infer<typeof CacheEntrySchema>;

/** `GET /fleet/mqtt/latest`: `devices` keyed by `<device_id>`. */
export const FleetLatestResponseSchema = z.looseObject({ devices: z.record(z.string(), CacheEntrySchema) }).describe('GET /fleet/mqtt/latest answer');
/** A `GET /fleet/mqtt/latest` answer as parsed (see FleetLatestResponseSchema). */
export type FleetLatestResponse = z.infer<typeof FleetLatestResponseSchema>;
