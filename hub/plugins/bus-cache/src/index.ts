import { z } from 'zod';
import { HUB_INFO, HUB_METRICS, HUB_STATE, type HubInfo } from 'lookout/hub';
import { definePlugin, reply } from 'lookout/core';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_ADMISSION } from '../../registry/src/service.js';
import { persistCache } from './cache-persistence.js';
import { entryView, isOnline, personCountOf } from './entry-view.js';
import { DEFAULT_HOLD_LIMITS } from './early-messages.js';
import { Ingest, type IngestMeta } from './ingest.js';
import { LatestJson } from './latest-json.js';
import { ConfigResponse, LatestQuery, LatestResponse } from './schemas.js';
import { BUS_CACHE, type BusCache } from './service.js';
import { INGEST_SUBSCRIPTIONS, SPEC_DEFAULT_SUBSCRIPTIONS } from './subscriptions.js';

/** The bus cache of spec 01: the latest valid message per device and topic, served over HTTP. */
export default definePlugin({
  name: 'bus-cache',
  version: '1.0.0',
  core: '^1',
  description: 'Ingests the telemetry bus into a per-device, per-topic cache (GET /fleet/mqtt/latest, /fleet/mqtt/config)',
  requires: [DEBUG_RING],
  optionalRequires: [HUB_METRICS, HUB_INFO, HUB_STATE],
  config: z.object({
    LOOKOUT_HUB_STALE_SEC: z.coerce.number().int().min(1).default(120),
    LOOKOUT_HUB_MAX_MESSAGE_BYTES: z.coerce
      .number()
      .int()
      .min(256)
      .default(256 * 1024),
    LOOKOUT_HUB_MAX_JSON_DEPTH: z.coerce.number().int().min(4).max(1000).default(32),
    LOOKOUT_HUB_MAX_DEVICES: z.coerce.number().int().min(1).default(10_000),
    // How long a valid message of a device not known yet waits for its hello (0: refused at once).
    LOOKOUT_HUB_REORDER_WINDOW_MS: z.coerce.number().int().min(0).max(600_000).default(DEFAULT_HOLD_LIMITS.windowMs),
  }),
  subscriptions: [...INGEST_SUBSCRIPTIONS],
  provides: [BUS_CACHE, DEVICE_ADMISSION],
  routes: [
    {
      method: 'GET',
      path: '/fleet/mqtt/latest',
      summary: 'Latest cache entry per device (status, payload, dets, recent_chunks, anomaly_alerts, stale_sec)',
      query: LatestQuery,
      response: LatestResponse,
    },
    { method: 'GET', path: '/fleet/mqtt/config', summary: 'Broker, subscribed topics and ingest status', response: ConfigResponse },
  ],
  async start(ctx) {
    const cfg = ctx.config;
    const metrics = ctx.services.optional(HUB_METRICS);
    const info = ctx.services.optional(HUB_INFO);
    const ring = ctx.services.get(DEBUG_RING);
    const ingest = new Ingest(
      {
        maxMessageBytes: cfg.LOOKOUT_HUB_MAX_MESSAGE_BYTES,
        maxDepth: cfg.LOOKOUT_HUB_MAX_JSON_DEPTH,
        maxDevices: cfg.LOOKOUT_HUB_MAX_DEVICES,
        maxTopicsPerDevice: 64,
        maxAlerts: 20,
        maxChunks: 20,
        hold: { windowMs: cfg.LOOKOUT_HUB_REORDER_WINDOW_MS },
      },
      { ...(metrics ? { metrics } : {}), ring, log: ctx.log, connected: () => ctx.bus.connected },
    );
    // Reloaded before the first subscription: a restored device's retained messages update its entry.
    const store = ctx.services.optional(HUB_STATE);
    const saved = store ? await persistCache(store, ingest, { ring, log: ctx.log, maxDevices: cfg.LOOKOUT_HUB_MAX_DEVICES }) : undefined;
    const staleSec = cfg.LOOKOUT_HUB_STALE_SEC;
    // A hub replica may hold back a device's frequent messages (another replica owns it): applied before the device is read.
    const freshen = (id?: string): void => info?.freshen?.(id);
    const deviceOf = (id: string) => {
      freshen(id);
      return ingest.devices.get(id);
    };
    const cache: BusCache = {
      staleSec,
      on: (key, listener) => ingest.on(key, listener),
      device: deviceOf,
      deviceAsApplied: (id) => ingest.devices.get(id),
      view: (id, now = Date.now()) => {
        const d = deviceOf(id);
        return d ? entryView(d, staleSec, now) : undefined;
      },
      isOnline: (id, now = Date.now()) => {
        const d = ingest.devices.get(id);
        return d ? isOnline(d, staleSec, now) : false;
      },
      personCount: (id) => {
        const d = deviceOf(id);
        return d ? personCountOf(d) : null;
      },
      deviceIds: () => [...ingest.devices.keys()],
      ingestStatus: () => ingest.status(),
      annotateAlert: (id, topic, receivedAt, fields) => {
        const done = ingest.devices.get(id)?.annotateAlert(topic, new Date(receivedAt).toISOString(), fields) ?? false;
        if (done) saved?.changed();
        return done;
      },
    };
    ctx.services.provide(BUS_CACHE, cache);
    ctx.services.provide(DEVICE_ADMISSION, ingest.admission);

    // Each entry serialised once when it changes, the pieces joined per request (latest-json.ts).
    const latestJson = new LatestJson(staleSec);
    ctx.routes.handle<z.output<typeof LatestQuery>>('GET', '/fleet/mqtt/latest', ({ query }) => {
      freshen(query.device);
      const ids = query.device !== undefined ? [query.device] : latestJson.ids(ingest.devices, ingest.membership);
      // As bytes: encoded once here, where a string body would be measured and then encoded again.
      return reply({ body: Buffer.from(latestJson.answer(ingest.devices, ids, Date.now(), query.stale)), type: 'application/json' });
    });

    ctx.routes.handle('GET', '/fleet/mqtt/config', () => {
      const s = ingest.status();
      return {
        broker: brokerView(info),
        topics_subscribed: [...INGEST_SUBSCRIPTIONS],
        spec_default_subscriptions: [...SPEC_DEFAULT_SUBSCRIPTIONS],
        ingest: {
          connected: s.connected,
          messages: s.messages,
          valid: s.valid,
          invalid: s.invalid,
          last_message_at: s.lastMessageAt === null ? null : new Date(s.lastMessageAt).toISOString(),
          rate_hz: s.ratePerSec,
          invalid_by_topic: s.invalidByTopic,
          invalid_by_reason: s.invalidByReason,
          device_count: s.devices,
          untracked_invalid: s.untrackedInvalid,
          refused_devices: s.refusedDevices,
          refused_unknown_devices: ingest.refusedUnknown,
          held_unknown: ingest.heldUnknown,
        },
        state: info?.sharedState?.() ?? { backend: 'memory', replica: false, stale: false, stale_since: null },
        limits: {
          max_message_bytes: cfg.LOOKOUT_HUB_MAX_MESSAGE_BYTES,
          max_json_depth: cfg.LOOKOUT_HUB_MAX_JSON_DEPTH,
          max_devices: cfg.LOOKOUT_HUB_MAX_DEVICES,
          stale_sec: staleSec,
          reorder_window_ms: cfg.LOOKOUT_HUB_REORDER_WINDOW_MS,
        },
      };
    });

    // One handler for every filter: the filters do not overlap (hub-ingest test), and were one
    // added that does, both buses call a handler once per message however many of its filters match.
    const onMessage = (topic: string, payload: Buffer, meta: IngestMeta) => {
      try {
        ingest.handle(topic, payload, meta);
        saved?.changed();
      } catch (err) {
        // Nothing a publisher sends may stop the ingest; a failure here is ours, logged and recorded.
        ctx.log.error({ err, topic }, 'ingest failed');
        ring.record({ kind: 'hub', topic: topic.slice(0, 256), message: `ingest failed: ${(err as Error).message}` });
      }
    };
    for (const filter of INGEST_SUBSCRIPTIONS) await ctx.bus.subscribe(filter, onMessage);
    // After the subscriptions, so that it runs before they end: a hub replica applies what it held
    // back when it saves (IngestRelay.resumePoint), which needs this plugin's handlers still there.
    if (saved) ctx.onStop(() => saved.flush());
    // The registry starts after this plugin: only once it has, the devices its file names are known.
    ctx.onStarted(() => {
      ingest.settle();
      saved?.changed();
      const windowMs = cfg.LOOKOUT_HUB_REORDER_WINDOW_MS;
      if (windowMs <= 0) return;
      // A message waits at most a tenth of its window (or 1 s) past it: the count of refusals is that late, no later.
      const timer = setInterval(
        () => {
          try {
            if (ingest.expireHeld() > 0) saved?.changed();
          } catch (err) {
            ctx.log.error({ err }, 'ending the wait of messages of unknown devices failed');
          }
        },
        Math.min(1_000, Math.max(10, Math.ceil(windowMs / 10))),
      );
      timer.unref();
      ctx.onStop(() => clearInterval(timer));
    });
  },
});

function brokerView(info: HubInfo | undefined): z.output<typeof ConfigResponse>['broker'] {
  if (!info) return { url: 'unknown', host: 'unknown', port: null, embedded: false };
  let host = 'unknown';
  let port: number | null = null;
  try {
    const u = new URL(info.brokerUrl);
    host = u.hostname;
    port = u.port ? Number(u.port) : u.protocol === 'mqtts:' ? 8883 : 1883;
  } catch {
    // Shown as given; the URL was stripped of credentials when the hub started.
  }
  return { url: info.brokerUrl, host, port, embedded: info.embeddedBroker };
}
