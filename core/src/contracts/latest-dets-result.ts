import { z } from 'zod';
import { MaybeCelsiusSchema, NonNegativeIntSchema, TimestampSchema } from './common.js';
import { DetectionSchema } from './detection.js';

/**
 * Result of the device tool `get_latest_dets` (spec 01: dets, person_count, track_id, temp_c).
 * The spec gives no type for the top-level `track_id`; with several detections one id cannot be
 * right, so it is the list of track ids present in `dets` (empty without the tracker layer).
 */
export const LatestDetsResultSchema = z
  .looseObject({
    dets: z.array(DetectionSchema),
    person_count: NonNegativeIntSchema,
    track_id: z.array(z.number().int()).describe('track ids present in dets'),
    temp_c: MaybeCelsiusSchema,
    timestamp: TimestampSchema.nullable().optional().describe('time of the frame; null before the first'),
  })
  .describe('get_latest_dets result (spec 01)');
export type LatestDetsResult = z.infer<typeof LatestDetsResultSchema>;
