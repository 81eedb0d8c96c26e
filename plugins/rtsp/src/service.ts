import { serviceToken } from 'lookout/core';

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
