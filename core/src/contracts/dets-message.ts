import { z } from 'zod';
import { NonNegativeIntSchema, RoleLabelSchema, TimestampSchema } from './common.js';
import { DetectionSchema } from './detection.js';

/** `devices/<device_id>/dets` (spec 01, "dets message"), about 10 Hz. */
export const DetsMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    camera_id: RoleLabelSchema,
    dets: z.array(DetectionSchema),
    person_count: NonNegativeIntSchema.describe('persons passing the person gate'),
    rf_detr_precomputed: z.boolean().describe('true marks on-device detector authority, not cloud inference'),
  })
  .describe('dets message (spec 01)');
export type DetsMessage = z.infer<typeof DetsMessageSchema>;
