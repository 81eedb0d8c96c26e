import type { ParameterSets, VideoCodec } from './nal-units.js';
import { PAYLOAD_TYPE } from './rtp-packetizer.js';

/** The track's control URL, relative to the Content-Base (the stream URL with a trailing slash). */
export const TRACK_CONTROL = 'trackID=0';

/**
 * The session description of one stream: one video track, its parameter sets out of band so a
 * client configures its decoder before the first packet (RFC 7798 7.1 sprop-vps/sps/pps; RFC 6184
 * 8.1 sprop-parameter-sets and profile-level-id, packetization-mode 1 for FU-A).
 */
export function sdpFor(o: { codec: VideoCodec; params: ParameterSets; fps: number; host: string; sessionId: string }): string {
  const b64 = (b: Buffer): string => b.toString('base64');
  const ipVersion = o.host.includes(':') ? 'IP6' : 'IP4';
  const lines = [
    'v=0',
    `o=- ${o.sessionId} 1 IN ${ipVersion} ${o.host}`,
    's=Lookout preview',
    `c=IN ${ipVersion} ${ipVersion === 'IP6' ? '::' : '0.0.0.0'}`,
    't=0 0',
  ];
  lines.push('a=control:*', 'a=range:npt=now-', `m=video 0 RTP/AVP ${PAYLOAD_TYPE}`);
  if (o.codec === 'h265') {
    lines.push(`a=rtpmap:${PAYLOAD_TYPE} H265/90000`);
    lines.push(`a=fmtp:${PAYLOAD_TYPE} sprop-vps=${b64(o.params.vps!)}; sprop-sps=${b64(o.params.sps)}; sprop-pps=${b64(o.params.pps)}`);
  } else {
    const profileLevelId = o.params.sps.subarray(1, 4).toString('hex');
    lines.push(`a=rtpmap:${PAYLOAD_TYPE} H264/90000`);
    lines.push(
      `a=fmtp:${PAYLOAD_TYPE} packetization-mode=1; profile-level-id=${profileLevelId}; sprop-parameter-sets=${b64(o.params.sps)},${b64(o.params.pps)}`,
    );
  }
  lines.push(`a=framerate:${o.fps}`, `a=control:${TRACK_CONTROL}`);
  return lines.join('\r\n') + '\r\n';
}
