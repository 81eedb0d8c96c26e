import { z } from 'zod';
import { CacheEntrySchema, DeviceIdSchema } from 'lookout/core/contracts';

const Message = z.looseObject({});

/** The spec's cache entry plus what the hub adds (all present in every answer). */
export const HubCacheEntrySchema = CacheEntrySchema.extend({
  device_id: DeviceIdSchema,
  person_count: z.number().int().nullable().describe('of the latest dets message'),
  health: Message.nullable().describe('latest health message'),
  online: z.boolean().describe('latest status says online and the entry is not stale'),
  last_message_at: z.string().nullable().describe('when the newest valid message was sent'),
  topics: z
    .record(z.string(), z.object({ received_at: z.string(), count: z.number().int(), retained: z.boolean() }))
    .describe('latest valid message per topic suffix'),
  invalid: z
    .record(z.string(), z.looseObject({ count: z.number().int(), last_reason: z.string(), last_at: z.string(), last_issue: z.string().optional() }))
    .describe('refused messages per topic suffix'),
});

export const LatestQuery = z.object({
  device: DeviceIdSchema.optional().describe('only this device'),
  stale: z.enum(['true', 'false']).optional().describe('only stale (true) or fresh (false) devices'),
});

export const LatestResponse = z.object({
  devices: z.record(z.string(), HubCacheEntrySchema),
  count: z.number().int(),
  stale_sec: z.number().int(),
  generated_at: z.string(),
});

export const ConfigResponse = z.object({
  broker: z.object({ url: z.string().describe('without credentials'), host: z.string(), port: z.number().int().nullable(), embedded: z.boolean() }),
  topics_subscribed: z.array(z.string()).describe('filters held at the broker: the spec defaults plus hello, without overlap'),
  spec_default_subscriptions: z.array(z.string()).describe('the spec\u2019s default subscriptions, every one covered by topics_subscribed'),
  ingest: z.object({
    connected: z.boolean(),
    messages: z.number().int(),
    valid: z.number().int(),
    invalid: z.number().int(),
    last_message_at: z.string().nullable(),
    rate_hz: z.number(),
    invalid_by_topic: z.record(z.string(), z.number().int()),
    invalid_by_reason: z.record(z.string(), z.number().int()),
    device_count: z.number().int(),
    untracked_invalid: z.number().int(),
    refused_devices: z.number().int().describe('valid messages of new devices dropped because the cache holds max_devices already'),
    refused_unknown_devices: z.number().int().describe('valid messages dropped because no hello announced their device and the registry does not name it'),
    held_unknown: z
      .number()
      .int()
      .describe(
        'valid messages of devices not known yet, waiting (at most reorder_window_ms) for their hello or the registry before they are applied or refused',
      ),
  }),
  state: z
    .object({
      backend: z.enum(['memory', 'redis']),
      replica: z.boolean().describe('the device ingest is shared with other hub replicas (MQTT 5 shared subscriptions)'),
      stale: z.boolean().describe('this replica cannot read what the others wrote (Redis down): it answers from its local copy'),
      stale_since: z.string().nullable(),
      details: z.record(z.string(), z.unknown()).optional(),
    })
    .describe('where the state hub replicas share lives (--state), and whether this copy is current'),
  limits: z.object({
    max_message_bytes: z.number().int(),
    max_json_depth: z.number().int(),
    max_devices: z.number().int(),
    stale_sec: z.number().int(),
    reorder_window_ms: z.number().int().describe('how long a valid message of a device not known yet waits for its hello (0: refused at once)'),
  }),
});
