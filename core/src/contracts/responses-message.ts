import { z } from 'zod';
import { TimestampSchema } from './common.js';

/**
 * `devices/<device_id>/responses`: upload, plugin and error replies to commands. The spec shows no
 * fields; a timestamp is required, the usual ones are typed when present. An error is
 * `{code, message, details?}`, as everywhere.
 */
export const ResponseMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    kind: z.string().min(1).optional().describe('upload, plugin, error, …'),
    request_id: z.string().min(1).optional().describe('id of the command answered'),
    ok: z.boolean().optional(),
    error: z
      .object({ code: z.string().min(1), message: z.string(), details: z.unknown().optional() })
      .optional()
      .describe('why ok is false: {code, message, details?} like every error'),
  })
  .describe('responses message');
/** A responses message as parsed (see ResponseMessageSchema). */
export type ResponseMessage = z.infer<typeof ResponseMessageSchema>;
