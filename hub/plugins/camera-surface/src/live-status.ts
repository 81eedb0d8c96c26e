import { z } from 'zod';
import { toLookoutError } from 'lookout/core';
import type { BusCache } from '../../bus-cache/src/service.js';
import type { RegisteredDevice } from '../../registry/src/service.js';
import { surfaceUrls } from './device-host.js';
import type { LiveProbe } from './live-probe.js';
import type { ProfileResult } from './profile-schemas.js';

/** Why viewers and the last keyframe are null: no device surface tells the hub (yet). */
export const RTSP_STATS_UNKNOWN =
  'not reported by the device: its rtsp plugin counts viewers and keyframes (RtspService.viewers(), lastKeyframeAt()) but no device tool or bus message carries them';

const Failure = z.object({ code: z.string(), message: z.string() });

export const DeviceLiveStatus = z.object({
  device_id: z.string(),
  online: z.boolean().describe('the bus cache: its latest status says online and it is not stale'),
  last_seen_at: z.string().nullable(),
  stream_up: z.boolean().nullable().describe('the live stream answered with a picture; null when the device announced no live port'),
  reason: z.string().nullable().describe('why the stream is not up (or not probed)'),
  codec: z.enum(['H265']).nullable().describe('codec of the live stream (what recordings and /preview carry)'),
  resolution: z.string().nullable().describe('WIDTHxHEIGHT from the live stream’s SPS; else the profile’s'),
  resolution_source: z.enum(['stream', 'profile']).nullable(),
  fps: z.number().nullable().describe('the camera profile’s fps (the encoder’s ENCODE_FPS may override it on the device)'),
  profile: z.looseObject({}).nullable().describe('get_camera_profile’s profile; null when it could not be read'),
  profile_error: Failure.nullable(),
  rtsp: z.object({ port: z.number().int().nullable(), h265: z.string().nullable(), h264: z.string().nullable() }),
  onvif: z.object({ port: z.number().int().nullable(), device_service: z.string().nullable() }),
  viewers: z.number().int().nullable(),
  last_keyframe_at: z.string().nullable(),
  stats_reason: z.string().nullable().describe('why viewers and last_keyframe_at are null'),
});
export type DeviceLiveStatus = z.infer<typeof DeviceLiveStatus>;

export interface StatusDeps {
  cache: BusCache;
  probe: (device: RegisteredDevice, url: string, signal: AbortSignal) => Promise<LiveProbe>;
  profile: (device: RegisteredDevice, signal: AbortSignal) => Promise<ProfileResult>;
}

/** One device's live status: the live probe and get_camera_profile at once, each failure its field's. */
export async function liveStatusOf(deps: StatusDeps, device: RegisteredDevice, signal: AbortSignal): Promise<DeviceLiveStatus> {
  const urls = surfaceUrls(device);
  const view = deps.cache.view(device.deviceId);
  const [probe, profile] = await Promise.all([
    urls.live && device.toolUrl ? deps.probe(device, urls.live, signal) : Promise.resolve<LiveProbe | null>(null),
    deps.profile(device, signal).then(
      (r) => ({ ok: true as const, r }),
      (err: unknown) => ({ ok: false as const, error: toLookoutError(err) }),
    ),
  ]);
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
    codec: probe?.codec ?? null,
    resolution: probe?.resolution ?? p?.resolution ?? null,
    resolution_source: probe?.resolution ? 'stream' : p ? 'profile' : null,
    fps: p?.fps ?? null,
    profile: p,
    profile_error: profile.ok ? null : { code: profile.error.code, message: profile.error.message },
    rtsp: { port: portOf(device.ports?.rtsp), h265: urls.rtspH265, h264: urls.rtspH264 },
    onvif: { port: portOf(device.ports?.onvif), device_service: urls.onvif },
    viewers: null,
    last_keyframe_at: null,
    stats_reason: RTSP_STATS_UNKNOWN,
  };
}

const portOf = (p: unknown): number | null => (typeof p === 'number' ? p : null);

/** `work` over the devices, at most `concurrency` at once, results in the devices' order. */
export async function boundedMap<T, R>(items: readonly T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return out;
}
