import { z } from 'zod';
import { LookoutError, type RouteRequest } from 'lookout/core';
import { SIGNED_URL_DEFAULT_TTL_S, SIGNED_URL_MAX_TTL_S, signUrl } from 'lookout/lib/auth';
import { checkDeviceParam, clipName } from './clip-route.js';
import type { Media } from './media.js';

export const ClipSignBody = z.strictObject({
  device: z.string().min(1).max(128).describe('device id'),
  file: z.string().min(1).max(255).describe('<chunk>.mp4 (H.264) or <chunk>.hevc.mp4, as in playUrl / playUrlHevc'),
  ttl_s: z
    .number()
    .int()
    .min(1)
    .max(SIGNED_URL_MAX_TTL_S)
    .default(SIGNED_URL_DEFAULT_TTL_S)
    .describe(`lifetime of the URL in seconds (at most ${SIGNED_URL_MAX_TTL_S}, default ${SIGNED_URL_DEFAULT_TTL_S})`),
});

export const ClipSignResponse = z.object({
  url: z.string().describe('the signed URL on the Host the request named: opens without Authorization (GET/HEAD, Range) until expires_at'),
  path: z.string().describe('the same, relative to the hub: /media/clips/<device>/<file>?exp=…&sig=…'),
  expires_at: z.string().describe('ISO 8601'),
  ttl_s: z.number().int(),
});

/**
 * `POST /media/clips/sign` (bearer token): a signed, expiring URL of one clip for a player that
 * cannot send a header (`<video src>`, VLC). The signature (core/src/auth/signed-url.ts) is under a
 * key derived from the fleet secret, which the hub checks on GET /media/clips/:device/:file; the
 * token never goes into a URL.
 */
export function signClip(
  media: Media,
  key: string,
  req: RouteRequest<unknown, z.output<typeof ClipSignBody>>,
  nowMs: number,
): z.output<typeof ClipSignResponse> {
  const { device, file, ttl_s } = req.body;
  checkDeviceParam(device, 'body.device');
  clipName(file, 'body.file');
  if (!media.knownDevice(device)) throw new LookoutError('target_unknown', `no device ${device} is registered or known to the cache`);
  const signed = signUrl(key, `/media/clips/${encodeURIComponent(device)}/${encodeURIComponent(file)}`, nowMs / 1000, ttl_s);
  const host = typeof req.headers.host === 'string' ? req.headers.host : undefined;
  return {
    url: host ? `http://${host}${signed.path}` : signed.path,
    path: signed.path,
    expires_at: new Date(signed.exp * 1000).toISOString(),
    ttl_s: signed.exp - Math.floor(nowMs / 1000),
  };
}
