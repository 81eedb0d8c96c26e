import { ChunkNameSchema, DeviceIdSchema } from 'lookout/core/contracts';
import { LookoutError, type RouteRequest } from 'lookout/core';
import { clipReply } from './clip-reply.js';
import type { Media } from './media.js';
import type { ClipVariant } from './transcode-args.js';

/**
 * `GET /media/clips/:device/:file`: `<chunk>.mp4` (H.264) or `<chunk>.hevc.mp4` (the original
 * remuxed). Both names are checked before anything is looked up: a device id is one topic level
 * and never `.`/`..`, a chunk name is one file name (ChunkNameSchema): anything else is a 400.
 */
export async function serveClip(media: Media, req: RouteRequest): Promise<unknown> {
  const deviceId = req.params.device ?? '';
  const file = req.params.file ?? '';
  const { chunk, variant } = clipName(file);
  checkDeviceParam(deviceId);
  if (!media.knownDevice(deviceId)) throw new LookoutError('target_unknown', `no device ${deviceId} is registered or known to the cache`);
  // The file was evicted between finding and opening it (a full cache under load): built again, once.
  for (let attempt = 0; attempt < 2; attempt++) {
    const clip = await media.clip(deviceId, chunk, variant, req.signal);
    const answer = await clipReply(clip, req.headers, { 'Content-Disposition': `inline; filename="${file}"` });
    if (answer) return answer;
    media.deps.clips.forget(`${deviceId}/${chunk}`, variant);
  }
  throw new LookoutError('transcode_failed', `${deviceId}/${file} was evicted from the cache as soon as it was built (LOOKOUT_MEDIA_CACHE_BYTES too small?)`);
}

/** A device id of a clip's URL: one topic level, never `.`/`..` or a backslash; a 400 naming `field` otherwise. */
export function checkDeviceParam(deviceId: string, field = 'params.device'): void {
  if (!DeviceIdSchema.safeParse(deviceId).success || /^\.+$/.test(deviceId) || deviceId.includes('\\') || deviceId.length > 128) {
    throw new LookoutError('bad_request', `${field}: ${JSON.stringify(deviceId.slice(0, 64))} is not a device id`, { details: { field } });
  }
}

/** `<chunk>.hevc.mp4` / `<chunk>.mp4` → the chunk file name and the variant; a 400 (naming `field`) for anything else. */
export function clipName(file: string, field = 'params.file'): { chunk: string; variant: ClipVariant } {
  const m = /^(.+?)(\.hevc)?\.mp4$/.exec(file);
  const chunk = m ? `${m[1]}.h265` : '';
  if (!m || !ChunkNameSchema.safeParse(chunk).success) {
    throw new LookoutError('bad_request', `${field}: ${JSON.stringify(file.slice(0, 64))} is not <chunk>.mp4 or <chunk>.hevc.mp4 of a chunk name`, {
      details: { field },
    });
  }
  return { chunk, variant: m[2] ? 'hevc' : 'h264' };
}
