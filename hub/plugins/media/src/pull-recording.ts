import { z } from 'zod';
import { LookoutError, type RouteRequest } from 'lookout/core';
import type { DiscoveryStep } from './chunk-discovery.js';
import { clipReply } from './clip-reply.js';
import type { Media } from './media.js';

export const PullQuery = z.object({
  target: z.string().min(1).max(256).describe('device id, address or label, as POST /tools/call takes'),
  which: z.enum(['latest', 'recent']).default('latest').describe('latest: the newest chunk; recent: the newest justified chunk (the newest when none is)'),
  variant: z.enum(['h264', 'hevc']).default('h264').describe('h264: transcoded mp4 every browser plays; hevc: the original remuxed'),
});

/** The spec's order: the tool server, then an SFTP listing, then a shell listing over SSH. */
const STEPS: DiscoveryStep[] = ['device', 'local', 'ssh_sftp', 'ssh_listing'];
/** Enough to find a justified chunk among the recent ones. */
const LOOK_AT = 50;

/**
 * `GET /pull-recording`: finds the device's chunk, fetches it (tool server, else SFTP) and answers its mp4 from
 * the transcode cache (Range and ETag as /media/clips). Headers name the chunk and where it was
 * found. When neither the tool server nor SSH can list the recordings: recordings_unavailable
 * (502) with what each step said.
 */
export async function pullRecording(media: Media, req: RouteRequest<z.output<typeof PullQuery>>): Promise<unknown> {
  const device = media.deps.registry.resolve(req.query.target);
  const found = await media.discover(device, STEPS, { limit: LOOK_AT, signal: req.signal });
  const chunk = req.query.which === 'recent' ? (found.chunks.find((c) => c.justified === true) ?? found.chunks[0]) : found.chunks[0];
  if (!chunk)
    throw new LookoutError('recording_not_found', `${device.deviceId} holds no complete recording chunk (${found.source})`, {
      details: { source: found.source },
    });
  const urls = media.playUrls(device.deviceId, chunk.name);
  const extra = {
    'X-Lookout-Device': device.deviceId,
    'X-Lookout-Chunk': chunk.name,
    'X-Lookout-Chunk-Source': found.source,
    'Content-Location': req.query.variant === 'hevc' ? urls.playUrlHevc : urls.playUrl,
    'Content-Disposition': `inline; filename="${chunk.name.replace(/\.h265$/, req.query.variant === 'hevc' ? '.hevc.mp4' : '.mp4')}"`,
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    const clip = await media.clip(device.deviceId, chunk.name, req.query.variant, req.signal, 'pull-recording');
    const answer = await clipReply(clip, req.headers, extra);
    if (answer) return answer;
    media.deps.clips.forget(`${device.deviceId}/${chunk.name}`, req.query.variant);
  }
  throw new LookoutError('transcode_failed', `${device.deviceId}/${chunk.name} was evicted from the cache as soon as it was built`);
}
