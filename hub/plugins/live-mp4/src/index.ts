import { z } from 'zod';
import { LookoutError, definePlugin, reply } from 'lookout/core';
import { fleetCaDeviceTls, hubTlsPaths } from 'lookout/lib/tls';
import { DEVICE_REGISTRY, deviceSurfaceUrl, type RegisteredDevice } from '../../registry/src/service.js';
import { LiveFeed } from './live-feed.js';
import { RTSP_FAILED_DECL } from './rtsp-failure.js';

const LiveQuery = z.object({
  target: z.string().min(1).max(256).describe('device id, address or label'),
});

const MiB = 1024 * 1024;

/**
 * GET /stream/live/mp4: a device's H.264 preview (RTSP /preview_h264) as fragmented MP4 for Media
 * Source Extensions, one picture per fragment. The hub remuxes, never transcodes: one RTSP session
 * per device however many viewers watch.
 */
export default definePlugin({
  name: 'live-mp4',
  version: '1.0.0',
  core: '^1',
  description: "A device's H.264 preview remuxed (not transcoded) into fragmented MP4 for browsers (Media Source Extensions); one RTSP session per device",
  requires: [DEVICE_REGISTRY],
  errors: [RTSP_FAILED_DECL],
  config: z.object({
    /** The cameras' RTSP user (their ONVIF_USER). */
    LOOKOUT_LIVE_RTSP_USER: z.string().min(1).max(64).default('admin'),
    /** The cameras' RTSP password (their ONVIF_PASSWORD); unset for cameras that ask none (loopback only). */
    LOOKOUT_LIVE_RTSP_PASSWORD: z.string().min(1).max(256).optional(),
    LOOKOUT_LIVE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5000),
    /** How long a request waits for the first keyframe. */
    LOOKOUT_LIVE_FIRST_KEYFRAME_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    /** Viewers across all devices; more get 503. */
    LOOKOUT_LIVE_MAX_VIEWERS: z.coerce.number().int().min(1).max(10_000).default(64),
    LOOKOUT_LIVE_VIEWER_BUFFER_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(256 * MiB)
      .default(4 * MiB),
    LOOKOUT_LIVE_GOP_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(256 * MiB)
      .default(8 * MiB),
    /** How long a device's RTSP session stays open once its last viewer left. */
    LOOKOUT_LIVE_IDLE_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
  }),
  routes: [
    {
      method: 'GET',
      path: '/stream/live/mp4',
      errors: ['target_unknown', 'target_not_allowed', 'device_unreachable', 'live_stream_unavailable', 'rtsp_failed'],
      summary:
        "The device's H.264 preview as fragmented MP4 (Content-Type carries the codecs parameter for MediaSource.addSourceBuffer): the init segment, the pictures since the latest keyframe, then one fragment per picture",
      query: LiveQuery,
      produces: 'video/mp4',
    },
  ],
  start(ctx) {
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const cfg = ctx.config;
    const feeds = new Map<string, LiveFeed>();
    // A camera's RTSPS is verified as its other TLS surfaces are: the fleet CA only, its announced certificate pinned.
    const deviceTls = fleetCaDeviceTls(hubTlsPaths(ctx.runtime.dataDir).caPath);
    let viewers = 0;
    ctx.onStop(() => {
      for (const feed of [...feeds.values()]) feed.close();
    });

    const feedOf = (device: RegisteredDevice): LiveFeed => {
      const existing = feeds.get(device.deviceId);
      if (existing) return existing;
      const { url, secure } = previewUrl(device);
      const feed = new LiveFeed({
        deviceId: device.deviceId,
        url,
        ...(secure ? { tls: deviceTls({ deviceId: device.deviceId, fingerprint: device.tlsFingerprint ?? null }) } : {}),
        user: cfg.LOOKOUT_LIVE_RTSP_USER,
        ...(cfg.LOOKOUT_LIVE_RTSP_PASSWORD !== undefined ? { password: cfg.LOOKOUT_LIVE_RTSP_PASSWORD } : {}),
        connectTimeoutMs: cfg.LOOKOUT_LIVE_CONNECT_TIMEOUT_MS,
        maxViewerBufferBytes: cfg.LOOKOUT_LIVE_VIEWER_BUFFER_BYTES,
        maxGopBytes: cfg.LOOKOUT_LIVE_GOP_BYTES,
        idleMs: cfg.LOOKOUT_LIVE_IDLE_MS,
        onClose: (f, err) => {
          if (feeds.get(device.deviceId) === f) feeds.delete(device.deviceId);
          if (err) ctx.log.info({ device: device.deviceId, err: err.message }, 'live feed closed');
        },
      });
      feeds.set(device.deviceId, feed);
      return feed;
    };

    ctx.routes.handle<z.output<typeof LiveQuery>>('GET', '/stream/live/mp4', async ({ query, signal }) => {
      const device = registry.resolve(query.target);
      if (viewers >= cfg.LOOKOUT_LIVE_MAX_VIEWERS) {
        throw new LookoutError('live_stream_unavailable', `the hub serves ${cfg.LOOKOUT_LIVE_MAX_VIEWERS} live viewers already; retry later`);
      }
      const feed = feedOf(device);
      const codec = await feed.ready(cfg.LOOKOUT_LIVE_FIRST_KEYFRAME_MS, signal);
      const stream = feed.addViewer();
      viewers++;
      stream.once('close', () => viewers--);
      signal.addEventListener('abort', () => stream.destroy(), { once: true });
      return reply({
        status: 200,
        body: stream,
        type: `video/mp4; codecs="${codec}"`,
        headers: { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' },
      });
    });
  },
});

/**
 * rtsps://<the device's address>:<the rtsps port of its hello>/preview_h264 when it announces RTSPS
 * and a certificate to pin, else rtsp://…:<its rtsp port>/…; 503 when its hello announces neither.
 */
function previewUrl(device: RegisteredDevice): { url: string; secure: boolean } {
  const secure = typeof device.ports?.rtsps === 'number' && typeof device.tlsFingerprint === 'string';
  const url = deviceSurfaceUrl(device, secure ? 'rtsps' : 'rtsp', '/preview_h264');
  if (url === null) {
    throw new LookoutError('live_stream_unavailable', `${device.deviceId} announces no RTSP preview (no rtsp port in its hello, or no address)`);
  }
  return { url, secure };
}
