import { z } from 'zod';
import { TimestampSchema } from './common.js';

/**
 * `devices/<device_id>/events/<type>` (incident, automation_log, plugin events). The spec shows no
 * payload fields; a timestamp is required, the type (also in the topic) is typed when present.
 */
export const EventMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    type: z.string().min(1).optional(),
    message: z.string().optional(),
  })
  .describe('events/<type> message');
/** An events/<type> message as parsed (see EventMessageSchema). */
export type EventMessage = z.infer<typeof EventMessageSchema>;
