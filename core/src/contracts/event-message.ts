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

/**
 * `devices/<device_id>/events/automation_log`: something a device did on its own (or was asked to
 * do through its tools), told once it is done, so that an operator sees why footage went or a
 * detector paused. Loose like every event: a plugin may add its own details.
 */
export const AutomationLogEventSchema = EventMessageSchema.extend({
  type: z.literal('automation_log'),
  action: z
    .enum(['prune', 'thermal_suspend', 'thermal_resume', 'plugin_restart'])
    .describe('what was done: recordings pruned, detection suspended or resumed for heat, a plugin restarted'),
  plugin: z.string().min(1).describe('the plugin that did it'),
  trigger: z.string().min(1).describe('why: storage_critical, requested, a thermal state, restart_plugin'),
  outcome: z.enum(['ok', 'partial', 'failed']).describe('partial: done, but what triggered it remains (the volume still CRITICAL, the plugin failed again)'),
  message: z.string().describe('one line for the operator'),
  details: z.record(z.string(), z.unknown()).optional(),
}).describe('events/automation_log message');
/** An events/automation_log message (see AutomationLogEventSchema). */
export type AutomationLogEvent = z.infer<typeof AutomationLogEventSchema>;
