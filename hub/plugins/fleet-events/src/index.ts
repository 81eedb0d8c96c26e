import { z } from 'zod';
import { DeviceIdSchema, queryList } from 'lookout/core/contracts';
import { LookoutError, definePlugin, reply, type RouteRequest } from 'lookout/core';
import { HUB_INFO } from 'lookout/hub';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { FLEET_HISTORY } from '../../fleet-history/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEFAULT_KINDS, FLEET_EVENT_KINDS } from './event-kinds.js';
import { FleetEventHub } from './fleet-event-hub.js';

const EventsQuery = z.object({
  device: DeviceIdSchema.max(128).optional().describe('only events of this device (and hub-wide ring events)'),
  kind: queryList(z.enum(FLEET_EVENT_KINDS))
    .optional()
    .describe('comma-separated event names; default every one but dets (device, presence, thermal, incident, ring, sample)'),
});

/**
 * GET /fleet/events: Server-Sent Events of the fleet for any client (the console, curl -N, an
 * EventSource): device cards, presence and thermal changes, incidents, debug ring events, history
 * samples and, when asked, detections. With a hub token the request carries `Authorization: Bearer`
 * like every route (EventSource cannot: a browser page reads the stream with fetch instead).
 */
export default definePlugin({
  name: 'fleet-events',
  version: '1.0.0',
  core: '^1',
  description: 'GET /fleet/events: Server-Sent Events of device cards, presence, thermal changes, incidents, debug ring events, history samples and detections',
  requires: [BUS_CACHE, DEBUG_RING, DEVICE_REGISTRY],
  optionalRequires: [FLEET_HISTORY, HUB_INFO],
  config: z.object({
    /** Least time between two `device` events of one device. */
    LOOKOUT_EVENTS_DEVICE_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(1000),
    /** Dets of one device: at most one per this many ms on average; a device detecting at this very rate keeps every dets. */
    LOOKOUT_EVENTS_DETS_INTERVAL_MS: z.coerce.number().int().min(0).max(60_000).default(200),
    /** How often staleness and the debug ring are looked at. */
    LOOKOUT_EVENTS_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(500),
    LOOKOUT_EVENTS_HEARTBEAT_MS: z.coerce.number().int().min(1000).max(300_000).default(15_000),
    /** Clients at once; more get 503. */
    LOOKOUT_EVENTS_MAX_CLIENTS: z.coerce.number().int().min(1).max(100_000).default(1000),
    /** Unread bytes a client may lag behind before it is cut off (it reconnects). */
    LOOKOUT_EVENTS_MAX_BUFFER_BYTES: z.coerce
      .number()
      .int()
      .min(4096)
      .max(256 * 1024 * 1024)
      .default(1024 * 1024),
    /** The reconnection delay told to clients (the SSE `retry` field). */
    LOOKOUT_EVENTS_RETRY_MS: z.coerce.number().int().min(100).max(600_000).default(2000),
  }),
  errors: [{ code: 'too_many_clients', status: 503, description: 'the hub serves LOOKOUT_EVENTS_MAX_CLIENTS event streams already; retry later' }],
  routes: [
    {
      method: 'GET',
      path: '/fleet/events',
      errors: ['target_unknown', 'too_many_clients'],
      summary:
        'Server-Sent Events (text/event-stream): device (a card: presence, thermal, rates, person count, storage), presence, thermal, incident, ring (debug ring), sample (history) and, when asked, dets; each event’s data is one JSON object',
      query: EventsQuery,
      produces: 'text/event-stream',
    },
  ],
  start(ctx) {
    const cache = ctx.services.get(BUS_CACHE);
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const info = ctx.services.optional(HUB_INFO);
    const cfg = ctx.config;
    const hub = new FleetEventHub({
      cache,
      ring: ctx.services.get(DEBUG_RING),
      deviceIntervalMs: cfg.LOOKOUT_EVENTS_DEVICE_INTERVAL_MS,
      detsIntervalMs: cfg.LOOKOUT_EVENTS_DETS_INTERVAL_MS,
      pollMs: cfg.LOOKOUT_EVENTS_POLL_MS,
      heartbeatMs: cfg.LOOKOUT_EVENTS_HEARTBEAT_MS,
      maxBufferBytes: cfg.LOOKOUT_EVENTS_MAX_BUFFER_BYTES,
      retryMs: cfg.LOOKOUT_EVENTS_RETRY_MS,
      ...(info?.follow ? { follow: (deviceId?: string) => info.follow?.(deviceId) ?? (() => undefined) } : {}),
    });
    ctx.onStop(() => hub.close());
    // The history plugin starts after this one or not at all: its samples are listened to once every plugin runs.
    ctx.onStarted(() => {
      const history = ctx.services.optional(FLEET_HISTORY);
      if (history) ctx.onStop(hub.attachHistory(history));
    });

    ctx.routes.handle<z.output<typeof EventsQuery>>('GET', '/fleet/events', ({ query, signal }: RouteRequest<z.output<typeof EventsQuery>>) => {
      if (query.device !== undefined && cache.device(query.device) === undefined && registry.get(query.device) === undefined) {
        throw new LookoutError('target_unknown', `no device ${query.device} is registered or known to the cache`, { details: { device_id: query.device } });
      }
      if (hub.stats().clients >= cfg.LOOKOUT_EVENTS_MAX_CLIENTS) {
        throw new LookoutError('fleet-events.too_many_clients', `the hub serves ${cfg.LOOKOUT_EVENTS_MAX_CLIENTS} event streams already; retry later`);
      }
      const client = hub.connect({ kinds: new Set(query.kind ?? DEFAULT_KINDS), device: query.device });
      signal.addEventListener('abort', () => client.end(), { once: true });
      return reply({
        status: 200,
        body: client.stream,
        type: 'text/event-stream; charset=utf-8',
        // no-transform: a proxy must not compress or buffer it; X-Accel-Buffering: nginx's own switch.
        headers: { 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' },
      });
    });
  },
});
