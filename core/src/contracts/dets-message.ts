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
    // Optional additions (DESIGN.md): what a reader needs to put the boxes on a picture of the same instant.
    captured_at: TimestampSchema.optional().describe('capture time of the frame the boxes were found in (a picture with the same captured_at shows them)'),
    frame_width: z.number().int().positive().optional().describe('width of the frame b is in, pixels (absent: 640)'),
    frame_height: z.number().int().positive().optional().describe('height of the frame b is in, pixels (absent: 640)'),
  })
  .describe('dets message (spec 01)');
/** A dets message as parsed (see DetsMessageSchema). */
export type DetsMessage = z.infer<typeof DetsMessageSchema>;
