import { z } from 'zod';
import { NonNegativeIntSchema, TimestampSchema } from './common.js';

/** One decoded J1939 frame; the spec shows no fields, so all are optional and typed when present. */
export const CanFrameSchema = z.looseObject({
  pgn: NonNegativeIntSchema.optional(),
  source_address: NonNegativeIntSchema.optional(),
  name: z.string().optional(),
  value: z.unknown().optional(),
});

/** `devices/<device_id>/telemetry/can`: decoded CAN (J1939) frames. Only the timestamp is required. */
export const CanTelemetryMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    frames: z.array(CanFrameSchema).optional(),
  })
  .describe('telemetry/can message: decoded CAN (J1939) frames');
/** A telemetry/can message as parsed (see CanTelemetryMessageSchema). */
export type CanTelemetryMessage = z.infer<typeof CanTelemetryMessageSchema>;
