import { z } from 'zod';
import { definePlugin, setOwn, toLookoutError, DEVICE_CALL_ERRORS } from 'lookout/core';
import { queryInteger } from 'lookout/core/contracts';
import { DeviceTlsAgents, fleetCaDeviceTls, hubTlsPaths } from 'lookout/lib/tls';
import { deviceToolToken } from 'lookout/lib/auth';
import { mapBounded } from 'lookout/lib/limits';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { surfaceUrls } from './surface-urls.js';
import { callLiveStatusTool, DeviceLiveStatusResult } from './device-live-status.js';
import { callProfileTool } from './device-profile.js';
import { probeLive } from './live-probe.js';
import { DeviceLiveStatus, liveStatusOf, type StatusDeps } from './live-status.js';
import { CameraProfileUpdateBody, ProfileResult } from './profile-schemas.js';

const Target = z.string().min(1).max(256).describe('device id, device address (ip or ip:port) or label such as "canary"');
const TargetQuery = z.object({ target: Target });

const StatusQuery = z.object({
  shadow: z.string().min(1).max(128).optional().describe('role label of the devices; all devices without it'),
  limit: queryInteger(1, 10_000).optional().describe('devices per answer (by id); default LOOKOUT_HUB_CAMERA_MAX_DEVICES'),
});

const ProfileResponse = ProfileResult.extend({ device_id: z.string() });

const StatusResponse = z.object({
  shadow: z.string().nullable(),
  device_count: z.number().int(),
  up_count: z.number().int(),
  left_out: z.number().int().describe('devices past the limit (by id), not probed'),
  devices: z.record(z.string(), DeviceLiveStatus),
  generated_at: z.string(),
});

const InfoResponse = z.object({
  device_id: z.string(),
  host: z.string().nullable(),
  online: z.boolean(),
  streams: z
    .array(z.object({ name: z.enum(['h265', 'h264']), codec: z.enum(['H265', 'H264']), uri: z.string() }))
    .describe('RTSP URIs (/preview H.265, /preview_h264 H.264); empty when the device announced no rtsp port'),
  live_uri: z.string().nullable().describe('the device’s live stream (H.265 Annex B, bearer token), https when it serves TLS'),
  onvif: z.object({ port: z.number().int(), device_service: z.string() }).nullable(),
  profile: ProfileResult.nullable().describe('get_camera_profile; null when it failed (profile_error)'),
  profile_error: z.object({ code: z.string(), message: z.string() }).nullable(),
  live_status: DeviceLiveStatusResult.nullable().describe('get_live_status (the device’s rtsp plugin); null when it failed (live_status_error)'),
  live_status_error: z.object({ code: z.string(), message: z.string() }).nullable(),
});

/**
 * The camera surface seen from the hub: the camera profile through the device tools
 * (get_camera_profile, set_camera_profile), each device's live stream state, and where a video
 * client finds a device's RTSP, ONVIF and live addresses.
 */
export default definePlugin({
  name: 'camera-surface',
  version: '1.0.0',
  core: '^1',
  description: 'Camera profile (GET/PUT /camera/profile), live stream status and addresses (GET /stream/live/status, /stream/live/info)',
  requires: [DEVICE_REGISTRY, BUS_CACHE, DEVICE_TOOLS],
  config: z.object({
    /** The profile tools and the live probe of one device may take this long. */
    LOOKOUT_HUB_CAMERA_TOOL_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(5000),
    LOOKOUT_HUB_CAMERA_PROBE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(3000),
    /** GET /stream/live/status: devices probed at once, and devices per answer. */
    LOOKOUT_HUB_CAMERA_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    LOOKOUT_HUB_CAMERA_MAX_DEVICES: z.coerce.number().int().min(1).max(10_000).default(64),
    /** Devices' tool tokens derive from it; their live stream wants the same bearer as the tool server. */
    LOOKOUT_FLEET_SECRET: z.string().min(16).optional(),
  }),
  errors: [
    {
      code: 'device_tool_failed',
      status: 502,
      description: 'the device answered a camera profile tool with a failure of its own (details.device_code), or with no profile',
    },
  ],
  routes: [
    {
      method: 'GET',
      path: '/camera/profile',
      errors: [...DEVICE_CALL_ERRORS, 'tool_arguments_invalid', 'device_tool_failed'],
      summary: 'The camera encoder profile of a device (its get_camera_profile tool)',
      query: TargetQuery,
      response: ProfileResponse,
    },
    {
      method: 'PUT',
      path: '/camera/profile',
      errors: [...DEVICE_CALL_ERRORS, 'tool_arguments_invalid', 'device_tool_failed'],
      summary:
        'Changes fields of a device’s camera profile (its set_camera_profile tool): checked here, merged and persisted on the device; 400 tool_arguments_invalid when the device refuses the merged profile',
      query: TargetQuery,
      body: CameraProfileUpdateBody,
      response: ProfileResponse,
    },
    {
      method: 'GET',
      path: '/stream/live/status',
      summary:
        'Per device: live stream up (probed), codec, resolution, fps, RTSP viewers and sessions, last keyframe and encoder counters (get_live_status; without it resolution from the stream or profile, fps from the profile, the rest null with the reason), profile (get_camera_profile), RTSP and ONVIF ports',
      query: StatusQuery,
      response: StatusResponse,
    },
    {
      method: 'GET',
      path: '/stream/live/info',
      errors: ['target_unknown', 'target_not_allowed'],
      summary:
        'Where to watch a device: RTSP URIs (/preview, /preview_h264), the ONVIF device service, the live stream, its camera profile and live status (get_live_status)',
      query: TargetQuery,
      response: InfoResponse,
    },
  ],
  start(ctx) {
    const c = ctx.config;
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const cache = ctx.services.get(BUS_CACHE);
    const tools = ctx.services.get(DEVICE_TOOLS);
    const secret = c.LOOKOUT_FLEET_SECRET;
    const within = (signal: AbortSignal, ms: number) => AbortSignal.any([signal, AbortSignal.timeout(ms)]);

    // A live stream over TLS is probed trusting the fleet CA only, its certificate pinned to what the device announced.
    const agents = new DeviceTlsAgents(fleetCaDeviceTls(hubTlsPaths(ctx.runtime.dataDir).caPath));
    ctx.onStop(() => agents.close());
    const deps: StatusDeps = {
      cache,
      profile: (device, signal) => callProfileTool(tools, device, 'get_camera_profile', {}, within(signal, c.LOOKOUT_HUB_CAMERA_TOOL_TIMEOUT_MS)),
      probe: async (device, url, signal) => {
        let agent;
        try {
          agent = url.startsWith('https:') ? agents.agentOf({ deviceId: device.deviceId, fingerprint: device.tlsFingerprint ?? null }) : undefined;
        } catch (err) {
          const e = toLookoutError(err);
          return { up: false, codec: null, resolution: null, reason: `${e.code}: ${e.message}` };
        }
        const token = secret !== undefined ? deviceToolToken(secret, device.deviceId) : undefined;
        return probeLive(url, token, c.LOOKOUT_HUB_CAMERA_PROBE_TIMEOUT_MS, signal, agent);
      },
      liveStatus: (device, signal) => callLiveStatusTool(tools, device, within(signal, c.LOOKOUT_HUB_CAMERA_TOOL_TIMEOUT_MS)),
    };

    ctx.routes.handle<z.output<typeof TargetQuery>>('GET', '/camera/profile', async ({ query, signal }) => {
      const device = registry.resolve(query.target);
      return { device_id: device.deviceId, ...(await deps.profile(device, signal)) };
    });

    ctx.routes.handle<z.output<typeof TargetQuery>, z.output<typeof CameraProfileUpdateBody>>('PUT', '/camera/profile', async ({ query, body, signal }) => {
      const device = registry.resolve(query.target);
      const result = await callProfileTool(tools, device, 'set_camera_profile', body, within(signal, c.LOOKOUT_HUB_CAMERA_TOOL_TIMEOUT_MS));
      return { device_id: device.deviceId, ...result };
    });

    ctx.routes.handle<z.output<typeof StatusQuery>>('GET', '/stream/live/status', async ({ query, signal }) => {
      const matching = registry
        .list()
        .filter((d) => query.shadow === undefined || d.labels.includes(query.shadow) || d.roles.includes(query.shadow))
        .sort((a, b) => a.deviceId.localeCompare(b.deviceId));
      const devices = matching.slice(0, Math.min(query.limit ?? c.LOOKOUT_HUB_CAMERA_MAX_DEVICES, c.LOOKOUT_HUB_CAMERA_MAX_DEVICES));
      const statuses = await mapBounded(devices, c.LOOKOUT_HUB_CAMERA_CONCURRENCY, (d) => liveStatusOf(deps, d, signal));
      const out: Record<string, DeviceLiveStatus> = {};
      for (const s of statuses) setOwn(out, s.device_id, s);
      return {
        shadow: query.shadow ?? null,
        device_count: devices.length,
        up_count: statuses.filter((s) => s.stream_up === true).length,
        left_out: matching.length - devices.length,
        devices: out,
        generated_at: new Date().toISOString(),
      };
    });

    ctx.routes.handle<z.output<typeof TargetQuery>>('GET', '/stream/live/info', async ({ query, signal }) => {
      const device = registry.resolve(query.target);
      const urls = surfaceUrls(device);
      const [profile, live] = await Promise.all([
        deps.profile(device, signal).then(
          (r) => ({ r, error: null }),
          (err: unknown) => {
            const e = toLookoutError(err);
            return { r: null, error: { code: e.code, message: e.message } };
          },
        ),
        deps.liveStatus(device, signal),
      ]);
      const onvifPort = device.ports?.onvif;
      return {
        device_id: device.deviceId,
        host: urls.host,
        online: cache.isOnline(device.deviceId),
        streams: [
          ...(urls.rtspH265 ? [{ name: 'h265' as const, codec: 'H265' as const, uri: urls.rtspH265 }] : []),
          ...(urls.rtspH264 ? [{ name: 'h264' as const, codec: 'H264' as const, uri: urls.rtspH264 }] : []),
        ],
        live_uri: urls.live,
        onvif: urls.onvif && typeof onvifPort === 'number' ? { port: onvifPort, device_service: urls.onvif } : null,
        profile: profile.r,
        profile_error: profile.error,
        live_status: live.ok ? live.r : null,
        live_status_error: live.ok ? null : { code: live.code, message: live.reason },
      };
    });
  },
});
