import { z } from 'zod';
import { DeviceIdSchema, queryInteger, queryList } from 'lookout/core/contracts';
import { definePlugin } from 'lookout/core';
import { HUB_SHARED, HUB_STATE, type StateKeeper } from 'lookout/hub';
import { sharedRing } from './shared-ring.js';
import { DEFAULT_RING_MAX_BYTES, MemoryDebugRing } from './debug-ring.js';
import { RING_STATE_KEY, RING_STATE_MAX_BYTES, RING_STATE_MAX_EVENTS, parseRingState } from './ring-state.js';
import { DEBUG_RING, EVENT_KINDS, type DebugRing } from './service.js';

const EventsQuery = z.object({
  kind: queryList(z.enum(EVENT_KINDS)).optional().describe('only these kinds (comma-separated)'),
  device: DeviceIdSchema.optional().describe('only events of this device'),
  since: z
    .union([z.iso.datetime({ offset: true }), z.string().regex(/^\d{1,15}$/)], { error: 'an ISO 8601 timestamp or epoch milliseconds' })
    .optional()
    .describe('only events after this time (ISO 8601 or epoch ms)'),
  limit: queryInteger(1, 10_000).default(100).describe('newest events to return, at most'),
});

const DebugEventSchema = z.looseObject({
  seq: z.number().int(),
  timestamp: z.string(),
  kind: z.string(),
  device_id: z.string().optional(),
  topic: z.string().optional(),
  message: z.string(),
  details: z.unknown().optional(),
  suppressed_before: z.number().int().optional().describe('events of the same device and kind left out just before this one'),
});

const EventsResponse = z.object({
  events: z.array(DebugEventSchema).describe('oldest first'),
  capacity: z.number().int().describe('events held per lane (ingest, other)'),
  held: z.number().int(),
  bytes: z.number().int().describe('bytes held by the events other than valid ingests (their JSON size)'),
  max_bytes: z.number().int().describe('bound on bytes: the oldest events are dropped first'),
  dropped: z.number().int().describe('events pushed out since start'),
  suppressed: z.number().int().describe('repeated events of one device and kind left out since start (past LOOKOUT_HUB_RING_REPEAT_BURST)'),
  matched: z.number().int().describe('events matching the filter before limit'),
  kinds: z.array(z.enum(EVENT_KINDS)).describe('kinds that can be asked for'),
});

/** The debug event ring of spec 01: ingested messages and the hub's own failures, bounded in count and bytes. */
export default definePlugin({
  name: 'debug-ring',
  version: '1.0.0',
  core: '^1',
  description: 'Bounded ring of debug events (GET /debug/events)',
  config: z.object({
    LOOKOUT_HUB_RING_SIZE: z.coerce.number().int().min(10).max(1_000_000).default(2000),
    LOOKOUT_HUB_RING_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .default(DEFAULT_RING_MAX_BYTES),
    /** Failures of one device and kind kept back to back before the rate below applies (0: no bound). */
    LOOKOUT_HUB_RING_REPEAT_BURST: z.coerce.number().int().min(0).max(1_000_000).default(50),
    LOOKOUT_HUB_RING_REPEAT_PER_S: z.coerce.number().min(0.001).max(1_000_000).default(1),
  }),
  optionalRequires: [HUB_STATE, HUB_SHARED],
  provides: [DEBUG_RING],
  routes: [
    { method: 'GET', path: '/debug/events', summary: 'Debug event ring: ingested messages and hub failures', query: EventsQuery, response: EventsResponse },
  ],
  async start(ctx) {
    let saved: StateKeeper | undefined;
    const ring = new MemoryDebugRing(ctx.config.LOOKOUT_HUB_RING_SIZE, {
      maxBytes: ctx.config.LOOKOUT_HUB_RING_MAX_BYTES,
      onChange: () => saved?.changed(),
      repeats: { burst: ctx.config.LOOKOUT_HUB_RING_REPEAT_BURST, perSecond: ctx.config.LOOKOUT_HUB_RING_REPEAT_PER_S },
    });
    // The tail saved before a restart comes first, marked restored; a broken one is a warning in the ring itself.
    const store = ctx.services.optional(HUB_STATE);
    if (store) {
      const loaded = await store.load(RING_STATE_KEY, parseRingState);
      if (loaded.value) ring.restore(loaded.value.events);
      if (loaded.warning) {
        ctx.log.warn(loaded.warning);
        ring.record({ kind: 'hub', message: loaded.warning });
      }
      saved = store.keep(RING_STATE_KEY, () => ({ events: ring.tail(RING_STATE_MAX_EVENTS, RING_STATE_MAX_BYTES) }));
      const keeper = saved;
      ctx.onStop(() => keeper.flush());
    }
    // Hub replicas: what this hub records itself (a tool call, a failure) is shown by every replica;
    // what the shared ingest derives is recorded by each already (those records carry their time).
    const shared = ctx.services.optional(HUB_SHARED);
    const service: DebugRing = shared ? sharedRing(ring, shared) : ring;
    ctx.services.provide(DEBUG_RING, service);
    ctx.routes.handle<z.output<typeof EventsQuery>>('GET', '/debug/events', ({ query }) => {
      const sinceMs = query.since === undefined ? undefined : /^\d+$/.test(query.since) ? Number(query.since) : Date.parse(query.since);
      const filter = {
        limit: query.limit,
        ...(query.kind ? { kinds: query.kind } : {}),
        ...(query.device !== undefined ? { device: query.device } : {}),
        ...(sinceMs !== undefined ? { sinceMs } : {}),
      };
      const { maxBytes, ...page } = ring.query(filter);
      return { ...page, max_bytes: maxBytes, kinds: ring.kinds() };
    });
  },
});
