import { z } from 'zod';
import { LookoutError, toLookoutError } from 'lookout/core';
import { PlaybackReadyResultSchema, queryInteger } from 'lookout/core/contracts';
import { mapBounded } from 'lookout/lib/limits';
import type { ChunkRecord, DiscoveryStep } from './chunk-discovery.js';
import type { Media } from './media.js';
import { startOf } from './ssh-discovery.js';

export const PlaybackQuery = z.object({
  shadow: z.string().min(1).max(128).optional().describe('role label (or device id): only its devices; all registered devices without it'),
  limit: queryInteger(1, 200).default(20).describe('most chunks in the answer (newest first)'),
  justified: z.enum(['true', 'false']).optional().describe('only justified (true) or only unjustified (false) chunks'),
});

const DeviceErrorSchema = z.object({ device_id: z.string(), code: z.string(), message: z.string(), attempts: z.array(z.looseObject({})).optional() });

export const PlaybackResponse = PlaybackReadyResultSchema.extend({
  devices: z.array(z.object({ device_id: z.string(), source: z.string(), count: z.number().int() })).describe('per device: where its chunks came from'),
  errors: z.array(DeviceErrorSchema).describe('devices whose chunks could not be listed, with what each step said'),
});

/** data_manifest first (no device call at all), then the tool server, then SSH. */
const STEPS: DiscoveryStep[] = ['data_manifest', 'device', 'local', 'ssh_sftp', 'ssh_listing'];

/**
 * `GET /fleet/playback-ready`: the newest chunks of the devices of a role label, each with its
 * justified metadata, `playUrl` (H.264 mp4, transcoded once into the cache) and `playUrlHevc`
 * (the original remuxed). URLs are relative to the hub.
 */
export async function playbackReady(media: Media, query: z.output<typeof PlaybackQuery>, signal: AbortSignal): Promise<z.output<typeof PlaybackResponse>> {
  const justified = query.justified === undefined ? undefined : query.justified === 'true';
  const devices = media.devicesOf(query.shadow);
  const per = await mapBounded(devices, media.deps.discoveryConcurrency, async (d) => {
    try {
      const found = await media.discover(d, STEPS, { limit: query.limit, signal, ...(justified !== undefined ? { justified } : {}) });
      return { device: d.deviceId, found };
    } catch (err) {
      if (signal.aborted) throw err;
      return { device: d.deviceId, error: toLookoutError(err) };
    }
  });
  const chunks: Record<string, unknown>[] = [];
  const summary: z.output<typeof PlaybackResponse>['devices'] = [];
  const errors: z.output<typeof DeviceErrorSchema>[] = [];
  for (const p of per) {
    if (p.found) {
      summary.push({ device_id: p.device, source: p.found.source, count: p.found.chunks.length });
      for (const c of p.found.chunks) chunks.push(playable(media, p.device, c, p.found.source));
    } else {
      const e = p.error ?? new LookoutError('internal', 'no answer');
      const attempts = (e.details as { attempts?: Record<string, unknown>[] } | undefined)?.attempts;
      errors.push({ device_id: p.device, code: e.code, message: e.message, ...(attempts ? { attempts } : {}) });
    }
  }
  const newest = chunks.sort(byStartDesc).slice(0, query.limit);
  return { recent_chunks: newest as z.output<typeof PlaybackResponse>['recent_chunks'], count: newest.length, devices: summary, errors };
}

/** A chunk as the answer lists it: the fields the schemas know, checked, plus its URLs. */
function playable(media: Media, deviceId: string, c: ChunkRecord, source: string): Record<string, unknown> {
  const num = (v: unknown, min = 0) => (typeof v === 'number' && Number.isFinite(v) && v >= min ? v : undefined);
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const entry: Record<string, unknown> = {
    device_id: deviceId,
    name: c.name,
    started_at: str(c.started_at) ?? startOf(c.name).started_at,
    ended_at: str(c.ended_at),
    duration_s: num(c.duration_s) || undefined,
    keyframe_count: Number.isInteger(c.keyframe_count) ? num(c.keyframe_count) : undefined,
    justified: c.justified === true,
    justified_reason: typeof c.justified_reason === 'string' ? c.justified_reason : c.justified === true ? 'justified (no reason given)' : null,
    rfdetr_stride_fps: num(c.rfdetr_stride_fps),
    fps: num(c.fps) || undefined,
    size_bytes: Number.isInteger(c.size_bytes) ? num(c.size_bytes) : undefined,
    detections: typeof c.detections === 'object' && c.detections !== null ? c.detections : undefined,
    source,
    ...media.playUrls(deviceId, c.name),
  };
  for (const k of Object.keys(entry)) if (entry[k] === undefined) delete entry[k];
  return entry;
}

function byStartDesc(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const k = (x: Record<string, unknown>) => `${typeof x.started_at === 'string' ? x.started_at : ''}${String(x.name)}`;
  return k(a) < k(b) ? 1 : k(a) > k(b) ? -1 : 0;
}
