import { z } from 'zod';
import { MaybeCelsiusSchema, NonNegativeIntSchema, TimestampSchema } from './common.js';
import { DetectionSchema } from './detection.js';

/**
 * Result of the device tool `get_latest_dets` (spec 01: dets, person_count, track_id, temp_c).
 * The spec gives no type for the top-level `track_id`; a track_id is always one integer, so it is
 * the track of the most confident gated person detection (null without one, or without the tracker
 * layer), and `track_ids` lists every track id present in `dets`.
 */
export const LatestDetsResultSchema = z
  .looseObject({
    dets: z.array(DetectionSchema),
    person_count: NonNegativeIntSchema,
    track_id: z.number().int().nullable().describe('track id of the most confident gated person detection; null without one'),
    track_ids: z.array(z.number().int()).describe('every track id present in dets'),
    temp_c: MaybeCelsiusSchema,
    timestamp: TimestampSchema.nullable().optional().describe('time of the frame; null before the first'),
  })
  .describe('get_latest_dets result (spec 01)');
/** A `get_latest_dets` result as parsed (see LatestDetsResultSchema). */
export type LatestDetsResult = z.infer<typeof LatestDetsResultSchema>;
