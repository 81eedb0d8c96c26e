import type { EncodedVideo } from '../../encode/src/service.js';
import type { LiveStatusResult } from './service.js';

/** What the tool reads besides the encoded video: the RTSP server's counts (absent while no server runs). */
export interface LiveStatusSources {
  video: EncodedVideo;
  server: { port: number; viewers(): number; sessionsByTransport(): { tcp: number; udp: number } } | null;
  paths: { h265: string; h264: string | null };
  lastKeyframeAt(): string | null;
}

/** One answer of get_live_status, read at the moment of the call (nothing is cached). */
export function liveStatus(s: LiveStatusSources): LiveStatusResult {
  const { video, server } = s;
  const stats = video.stats();
  return {
    stream_up: video.running && video.latestGop().length > 0,
    codec: 'H265',
    h264_available: s.paths.h264 !== null,
    width: video.width,
    height: video.height,
    fps: video.fps,
    gop: video.gop,
    viewers: server ? server.viewers() : 0,
    sessions: server ? server.sessionsByTransport() : { tcp: 0, udp: 0 },
    last_keyframe_at: s.lastKeyframeAt(),
    rtsp: { port: server ? server.port : null, paths: { ...s.paths } },
    encoder: { running: video.running, frames: stats.frames, dropped: stats.dropped, encode_fps: stats.encode_fps, bitrate_kbps: stats.bitrate_kbps },
  };
}
