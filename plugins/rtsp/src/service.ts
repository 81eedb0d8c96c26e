import { serviceToken, z } from 'lookout/core';

/**
 * The device's RTSP preview server, for the ONVIF GetStreamUri answer and the hub's live status: the
 * port it listens on, the paths of its streams, how many viewers watch and when the newest keyframe left.
 */
export interface RtspService {
  readonly port: number;
  /** Paths (with the leading slash) of the H.265 stream and of the H.264 one (null when the device offers none). */
  readonly paths: { h265: string; h264: string | null };
  /** Viewers playing now, all paths together. */
  viewers(): number;
  /** ISO time of the newest keyframe the server has seen (null before the first). */
  lastKeyframeAt(): string | null;
}

export const RtspServiceToken = serviceToken<RtspService>('rtsp.server');

/** The device tool get_live_status's answer (the hub's camera-surface reads it): the RTSP preview and the encoder behind it, as the hub's /stream/live/status shows them. */
export const LiveStatusResultSchema = z.object({
  stream_up: z.boolean().describe('the encoder runs and has made a keyframe since: a viewer gets pictures at once'),
  codec: z.literal('H265').describe('codec of /preview (what recordings carry)'),
  h264_available: z.boolean().describe('/preview_h264 is served (the encoder’s second output)'),
  width: z.number().int(),
  height: z.number().int(),
  fps: z.number(),
  gop: z.number().int().describe('keyframe interval in pictures'),
  viewers: z.number().int().min(0).describe('RTSP sessions playing now, all paths together'),
  sessions: z.object({ tcp: z.number().int().min(0), udp: z.number().int().min(0) }).describe('RTSP sessions set up now (playing or not), by transport'),
  last_keyframe_at: z.string().nullable().describe('capture time (ISO) of the newest keyframe; null before the first'),
  rtsp: z.object({
    port: z.number().int().nullable().describe('null in the one-shot modes (no server runs)'),
    paths: z.object({ h265: z.string(), h264: z.string().nullable() }),
  }),
  encoder: z.object({
    running: z.boolean(),
    frames: z.number().int(),
    dropped: z.number().int(),
    encode_fps: z.number(),
    bitrate_kbps: z.number(),
  }),
});
export type LiveStatusResult = z.output<typeof LiveStatusResultSchema>;
