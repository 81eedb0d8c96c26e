import { join } from 'node:path';
import { z } from 'zod';
import { definePlugin, LookoutError, type RouteRequest } from 'lookout/core';
import { deviceToolToken, signedUrlKey } from 'lookout/lib/auth';
import { fleetCaDeviceTls, hubTlsPaths } from 'lookout/lib/tls';
import { DeviceHttpsFetch } from './device-https-fetch.js';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_SSH } from '../../device-ssh/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { TRANSFERS } from '../../transfers/src/service.js';
import { serveClip } from './clip-route.js';
import { ClipSignBody, ClipSignResponse, signClip } from './clip-sign.js';
import { sourcesDirOf, sweepSources } from './chunk-fetcher.js';
import { IncidentWatcher } from './incidents.js';
import { Media } from './media.js';
import { playbackReady, PlaybackQuery, PlaybackResponse } from './playback-ready.js';
import { pullRecording, PullQuery } from './pull-recording.js';
import { InventoryQuery, InventoryResponse, recorderInventory } from './recorder-inventory.js';
import { LocalRecordings } from './recordings-access.js';
import { registerToolFallbacks } from './tool-fallbacks.js';
import { TranscodeCache } from './transcode-cache.js';
import { MEDIA_FETCH_ERRORS } from './media-errors.js';

const MiB = 1024 * 1024;

/** Recordings served to HTTP clients: playable clips, pulled recordings, the fleet's recorder inventory. */
export default definePlugin({
  name: 'media',
  version: '1.0.0',
  core: '^1',
  description:
    'Recordings for HTTP clients: mp4 clips from a transcode cache, playback-ready chunks, pull-recording, recorder inventory, SSH fallbacks of the chunk tools',
  requires: [DEVICE_REGISTRY, BUS_CACHE, DEBUG_RING, DEVICE_TOOLS],
  optionalRequires: [DEVICE_SSH, TRANSFERS],
  config: z.object({
    /** Bound on the transcode cache's disk use; least recently used clips go first. */
    LOOKOUT_MEDIA_CACHE_BYTES: z.coerce
      .number()
      .int()
      .min(MiB)
      .default(2048 * MiB),
    /** Where clips are cached; default `<hub data dir>/media-cache`. */
    LOOKOUT_MEDIA_CACHE_DIR: z.string().min(1).optional(),
    /** ffmpeg processes at once (transcodes and remuxes); more wait. */
    LOOKOUT_MEDIA_TRANSCODES: z.coerce.number().int().min(1).max(64).default(2),
    /** Clip builds that may wait for one of those; more are refused with device_busy (429). */
    LOOKOUT_MEDIA_TRANSCODE_QUEUE: z.coerce.number().int().min(0).max(10_000).default(64),
    LOOKOUT_MEDIA_TRANSCODE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(300_000),
    /** x264 preset of the H.264 clips. */
    LOOKOUT_MEDIA_H264_PRESET: z.enum(['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium']).default('veryfast'),
    /** Time for one chunk to come from its device (tool server, else SFTP). */
    LOOKOUT_MEDIA_FETCH_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(120_000),
    /** Time for one discovery step (tool call, SSH listing). */
    LOOKOUT_MEDIA_STEP_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
    /** Devices asked at once by fleet routes. */
    LOOKOUT_MEDIA_DISCOVERY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    /**
     * A hub beside its devices (the simulated fleet, tests): their recordings folders on this
     * disk, a path holding `{device}`. Tried before SSH.
     */
    LOOKOUT_MEDIA_LOCAL_RECORDINGS: z.string().includes('{device}').optional(),
    LOOKOUT_MEDIA_INCIDENT_WINDOW_S: z.coerce.number().int().min(1).max(600).default(15),
    LOOKOUT_MEDIA_INCIDENT_WAIT_MS: z.coerce.number().int().min(0).max(900_000).default(120_000),
    LOOKOUT_MEDIA_INCIDENT_POLL_MS: z.coerce.number().int().min(50).max(60_000).default(5_000),
    /**
     * The hub sets it; signed clip URLs are made under a key derived from it (the hub checks them
     * under the same), and devices' tool tokens, which their GET /recordings/<file> asks for.
     */
    LOOKOUT_FLEET_SECRET: z.string().min(16).optional(),
  }),
  routes: [
    {
      method: 'GET',
      path: '/media/clips/:device/:file',
      params: { device: 'the device id', file: 'the chunk as mp4: <chunk>.mp4 (H.264) or <chunk>.hevc.mp4 (the original H.265)' },
      errors: [...MEDIA_FETCH_ERRORS, 'range_not_satisfiable', 'transcode_failed'],
      statuses: [206, 304],
      summary:
        'A chunk as mp4: <chunk>.mp4 (H.264, faststart, transcoded once into the cache) or <chunk>.hevc.mp4 (the original remuxed, hvc1); Range and ETag. With the bearer token, or without it by a signed URL (exp, sig) from POST /media/clips/sign',
      produces: 'video/mp4',
      signedUrl: true,
    },
    {
      method: 'POST',
      path: '/media/clips/sign',
      errors: ['target_unknown'],
      summary:
        'A signed, expiring URL of one clip (exp, sig: HMAC-SHA256 under a key derived from the fleet secret, never the token) that a player without headers (<video src>, VLC) opens with GET/HEAD and Range until it expires (default 1 h, at most 24 h)',
      body: ClipSignBody,
      response: ClipSignResponse,
    },
    {
      method: 'GET',
      path: '/fleet/playback-ready',
      summary: 'Newest chunks of the devices of a role label with their justified metadata, playUrl and playUrlHevc',
      query: PlaybackQuery,
      response: PlaybackResponse,
    },
    {
      method: 'GET',
      path: '/pull-recording',
      errors: [...MEDIA_FETCH_ERRORS, 'transcode_failed', 'tool_failed'],
      summary:
        "A device's latest (or most recent justified) recording as mp4; chunks found through the tool server, else SFTP, else an SSH listing, and fetched from the device's GET /recordings/<file> with its token, else SFTP",
      query: PullQuery,
      produces: 'video/mp4',
    },
    {
      method: 'GET',
      path: '/fleet/recorder-inventory',
      summary: 'Chunks and storage across the fleet: per device chunk count, newest chunk, storage health (cache and get_recording_status)',
      query: InventoryQuery,
      response: InventoryResponse,
    },
  ],
  async start(ctx) {
    const cfg = ctx.config;
    const ring = ctx.services.get(DEBUG_RING);
    const stopping = new AbortController();
    ctx.onStop(() => stopping.abort(new Error('the media plugin stopped')));
    const fleetSecret = cfg.LOOKOUT_FLEET_SECRET;
    const cacheDir = cfg.LOOKOUT_MEDIA_CACHE_DIR ?? join(ctx.runtime.dataDir, 'media-cache');
    const clips = new TranscodeCache({
      dir: join(cacheDir, 'clips'),
      maxBytes: cfg.LOOKOUT_MEDIA_CACHE_BYTES,
      concurrency: cfg.LOOKOUT_MEDIA_TRANSCODES,
      maxQueued: cfg.LOOKOUT_MEDIA_TRANSCODE_QUEUE,
      timeoutMs: cfg.LOOKOUT_MEDIA_TRANSCODE_TIMEOUT_MS,
      preset: cfg.LOOKOUT_MEDIA_H264_PRESET,
      signal: stopping.signal,
      onTranscode: (t) =>
        ring.record({
          kind: 'transcode',
          device_id: t.key.split('/')[0],
          message: `${t.key.split('/')[1] ?? t.key} → ${t.variant} mp4 in ${t.ms} ms (${t.bytes} bytes)`,
          details: { ...t, cache: clips.stats() },
        }),
    });
    await clips.init();
    // Chunks a crashed hub was fetching or building from: nothing uses them before this start.
    await sweepSources(sourcesDirOf(cacheDir));
    // A device announcing TLS serves its recordings over https: verified against the fleet CA, its certificate pinned.
    const https = new DeviceHttpsFetch(fleetCaDeviceTls(hubTlsPaths(ctx.runtime.dataDir).caPath));
    ctx.onStop(() => https.close());
    const media = new Media({
      https,
      registry: ctx.services.get(DEVICE_REGISTRY),
      cache: ctx.services.get(BUS_CACHE),
      tools: ctx.services.get(DEVICE_TOOLS),
      ring,
      // Looked up per use: device-ssh may start, fail or be restarted while this plugin runs.
      ssh: () => ctx.services.optional(DEVICE_SSH),
      // Chunks are pulled through the hub's transfer queue when its plugin runs (looked up per use, as SSH).
      transfers: () => ctx.services.optional(TRANSFERS),
      local: cfg.LOOKOUT_MEDIA_LOCAL_RECORDINGS ? new LocalRecordings(cfg.LOOKOUT_MEDIA_LOCAL_RECORDINGS) : undefined,
      // The token tools-proxy presents to the device's /mcp: its /recordings takes the same.
      credential: (deviceId) => (fleetSecret === undefined ? undefined : deviceToolToken(fleetSecret, deviceId)),
      clips,
      cacheDir,
      stepTimeoutMs: cfg.LOOKOUT_MEDIA_STEP_TIMEOUT_MS,
      fetchTimeoutMs: cfg.LOOKOUT_MEDIA_FETCH_TIMEOUT_MS,
      discoveryConcurrency: cfg.LOOKOUT_MEDIA_DISCOVERY_CONCURRENCY,
      signal: stopping.signal,
    });

    for (const remove of registerToolFallbacks(media)) ctx.onStop(remove);
    // The queue's pulls (operators', /pull-recording's, incidents') are made with this plugin's sources.
    const transfers = ctx.services.optional(TRANSFERS);
    if (transfers) ctx.onStop(transfers.setPuller((job) => media.pull(job)));

    const incidents = new IncidentWatcher(media, {
      windowS: cfg.LOOKOUT_MEDIA_INCIDENT_WINDOW_S,
      waitMs: cfg.LOOKOUT_MEDIA_INCIDENT_WAIT_MS,
      pollMs: cfg.LOOKOUT_MEDIA_INCIDENT_POLL_MS,
      concurrency: 2,
      maxQueued: 32,
      signal: stopping.signal,
      sleep: (ms) => new Promise((resolve) => ctx.clock.setTimeout(resolve, ms)),
    });
    ctx.onStop(media.deps.cache.on('events/+', (m) => incidents.handle(m)));
    ctx.onStop(media.deps.cache.on('data_manifest', (m) => media.recorder.fromManifest(m.deviceId, m.message, m.receivedAt)));

    ctx.routes.handle('GET', '/media/clips/:device/:file', (req: RouteRequest) => serveClip(media, req));
    const urlKey = cfg.LOOKOUT_FLEET_SECRET === undefined ? undefined : signedUrlKey(cfg.LOOKOUT_FLEET_SECRET);
    ctx.routes.handle<unknown, z.output<typeof ClipSignBody>>('POST', '/media/clips/sign', (req) => {
      if (urlKey === undefined) throw new LookoutError('service_unavailable', 'no fleet secret: this hub cannot sign clip URLs');
      return signClip(media, urlKey, req, ctx.clock.now());
    });
    ctx.routes.handle<z.output<typeof PlaybackQuery>>('GET', '/fleet/playback-ready', ({ query, signal }) => playbackReady(media, query, signal));
    ctx.routes.handle<z.output<typeof PullQuery>>('GET', '/pull-recording', (req) => pullRecording(media, req));
    ctx.routes.handle<z.output<typeof InventoryQuery>>('GET', '/fleet/recorder-inventory', ({ query, signal }) => recorderInventory(media, query, signal));
    ctx.log.info({ cacheDir, maxBytes: cfg.LOOKOUT_MEDIA_CACHE_BYTES, ssh: ctx.services.optional(DEVICE_SSH) !== undefined }, 'media ready');
  },
});
