import { z } from 'zod';
import { CanTelemetryMessageSchema } from 'lookout/core/contracts';

/** What the CAN reader is doing: frames arriving, reader up but the bus silent, reader unable to run. */
export const CanStateSchema = z.enum(['receiving', 'idle', 'unavailable']);
export type CanState = z.infer<typeof CanStateSchema>;

const Parameter = z.object({
  spn: z.number().int(),
  name: z.string(),
  value: z.number().nullable(),
  unit: z.string(),
  state: z.enum(['valid', 'not_available', 'error', 'reserved', 'missing']),
});

/** Our telemetry/can message: the contract's (timestamp, frames of pgn/source_address/name/value) with the reader's state and counters. */
export const CanMessageSchema = CanTelemetryMessageSchema.extend({
  interface: z.string(),
  source: z.enum(['candump', 'file']),
  state: CanStateSchema,
  reason: z.string().nullable(),
  frames: z.array(
    z.object({
      pgn: z.number().int(),
      source_address: z.number().int(),
      priority: z.number().int(),
      name: z.string(),
      value: z.record(z.string(), z.number().nullable()),
      parameters: z.array(Parameter),
      received_at: z.string(),
      count: z.number().int(),
    }),
  ),
  unknown_pgns: z.array(z.number().int()),
  counters: z.object({
    frames: z.number().int(),
    decoded: z.number().int(),
    unknown: z.number().int(),
    standard: z.number().int(),
    error_frames: z.number().int(),
    remote: z.number().int(),
    dropped: z.number().int(),
  }),
});
export type CanMessage = z.infer<typeof CanMessageSchema>;
