import { z } from 'zod';
import { toLookoutError } from 'lookout/core';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import { surfaceUrls } from './surface-urls.js';
import type { LiveStatusOutcome } from './device-live-status.js';
import type { LiveProbe } from './live-probe.js';
import type { ProfileResult } from './profile-schemas.js';

const Failure = z.object({ code: z.string(), message: z.string() });

export const DeviceLiveStatus = z.object({
  device_id: z.string(),
  online: z.boolean().describe('the bus cache: its latest status says online and it is not stale'),
  last_seen_at: z.string().nullable(),
  stream_up: z.boolean().nullable().describe('the live stream answered with a picture; null when the device announced no live port'),
  reason: z.string().nullable().describe('why the stream is not up (or not probed)'),
  codec: z.enum(['H265']).nullable().describe('codec of the live stream (what recordings and /preview carry)'),
  resolution: z.string().nullable().describe('WIDTHxHEIGHT the encoder runs at (get_live_status); else from the live stream’s SPS; else the profile’s'),
  resolution_source: z.enum(['device', 'stream', 'profile']).nullable(),
  fps: z.number().nullable().describe('the encoder’s fps (get_live_status); else the camera profile’s (ENCODE_FPS may override it on the device)'),
  fps_source: z.enum(['device', 'profile']).nullable(),
  profile: z.looseObject({}).nullable().describe('get_camera_profile’s profile; null when it could not be read'),
  profile_error: Failure.nullable(),
  rtsp: z.object({ port: z.number().int().nullable(), h265: z.string().nullable(), h264: z.string().nullable() }),
  onvif: z.object({ port: z.number().int().nullable(), device_service: z.string().nullable() }),
  viewers: z.number().int().nullable().describe('RTSP sessions playing now (get_live_status)'),
  sessions: z.object({ tcp: z.number().int(), udp: z.number().int() }).nullable().describe('RTSP sessions set up now, by transport'),
  last_keyframe_at: z.string().nullable().describe('capture time of the encoder’s newest keyframe (get_live_status)'),
  encoder: z
    .object({ running: z.boolean(), frames: z.number(), dropped: z.number(), encode_fps: z.number(), bitrate_kbps: z.number() })
    .nullable()
    .describe('the encoder’s counters (get_live_status)'),
  stats_reason: z.string().nullable().describe('why viewers, sessions, last_keyframe_at and encoder are null: get_live_status did not answer'),
  stats_error_code: z.string().nullable().describe('the code of that failure (tool_not_found: the device has no rtsp plugin)'),
});
export type DeviceLiveStatus = z.infer<typeof DeviceLiveStatus>;

export interface StatusDeps {
  cache: BusCache;
  probe: (device: RegisteredDevice, url: string, signal: AbortSignal) => Promise<LiveProbe>;
  profile: (device: RegisteredDevice, signal: AbortSignal) => Promise<ProfileResult>;
  /** get_live_status on the device; never rejects (the failure is the outcome). */
  liveStatus: (device: RegisteredDevice, signal: AbortSignal) => Promise<LiveStatusOutcome>;
}

/**
 * One device's live status: the live probe, get_camera_profile and get_live_status at once, each
 * failure its field's. The device's own report (get_live_status) gives the size and rate the encoder
 * really runs at, the viewers and the newest keyframe; without it the stream's SPS and the profile do.
 */
export async function liveStatusOf(deps: StatusDeps, device: RegisteredDevice, signal: AbortSignal): Promise<DeviceLiveStatus> {
  const urls = surfaceUrls(device);
  const view = deps.cache.view(device.deviceId);
  const [probe, profile, live] = await Promise.all([
    urls.live && device.toolUrl ? deps.probe(device, urls.live, signal) : Promise.resolve<LiveProbe | null>(null),
    deps.profile(device, signal).then(
      (r) => ({ ok: true as const, r }),
      (err: unknown) => ({ ok: false as const, error: toLookoutError(err) }),
    ),
    deps.liveStatus(device, signal),
  ]);
  const d = live.ok ? live.r : null;
  const p = profile.ok ? profile.r.profile : null;
  const notProbed = !urls.live
    ? `${device.deviceId} announced no live port (no encoder running)`
    : `${device.deviceId} is not contacted: ${device.unreachableReason ?? 'no address'}`;
  return {
    device_id: device.deviceId,
    online: deps.cache.isOnline(device.deviceId),
    last_seen_at: view?.last_seen_at ?? null,
    stream_up: probe ? probe.up : null,
    reason: probe ? probe.reason : notProbed,
    codec: probe?.codec ?? (d?.stream_up ? d.codec : null),
    resolution: d ? `${d.width}x${d.height}` : (probe?.resolution ?? p?.resolution ?? null),
    resolution_source: d ? 'device' : probe?.resolution ? 'stream' : p ? 'profile' : null,
    fps: d?.fps ?? p?.fps ?? null,
    fps_source: d ? 'device' : p ? 'profile' : null,
    profile: p,
    profile_error: profile.ok ? null : { code: profile.error.code, message: profile.error.message },
    rtsp: { port: portOf(device.ports?.rtsp), h265: urls.rtspH265, h264: urls.rtspH264 },
    onvif: { port: portOf(device.ports?.onvif), device_service: urls.onvif },
    viewers: d?.viewers ?? null,
    sessions: d ? { tcp: d.sessions.tcp, udp: d.sessions.udp } : null,
    last_keyframe_at: d?.last_keyframe_at ?? null,
    encoder: d ? { ...d.encoder } : null,
    stats_reason: live.ok ? null : live.reason,
    stats_error_code: live.ok ? null : live.code,
  };
}

const portOf = (p: unknown): number | null => (typeof p === 'number' ? p : null);
