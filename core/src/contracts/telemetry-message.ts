import { z } from 'zod';
import { MaybeCelsiusSchema, NonNegativeIntSchema, RoleLabelSchema, TimestampSchema } from './common.js';
import { DetectionSchema } from './detection.js';

export const TelemetryBlockSchema = z.looseObject({
  die_temp: MaybeCelsiusSchema,
  fps: NonNegativeIntSchema.describe('rate actually achieved; nominal 10'),
});

/** `devices/<device_id>/telemetry` (spec 01, "telemetry message"); every field is required for contract verify. */
export const TelemetryMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    camera_id: RoleLabelSchema,
    detections: z.array(DetectionSchema),
    telemetry: TelemetryBlockSchema,
  })
  .describe('telemetry message (spec 01)');
export type TelemetryMessage = z.infer<typeof TelemetryMessageSchema>;
