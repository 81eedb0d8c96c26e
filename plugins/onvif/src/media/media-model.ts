import type { CameraProfileService } from '../../../camera-profile/src/service.js';
type CameraProfile = ReturnType<CameraProfileService['get']>;
import type { EncodedVideo } from '../../../encode/src/service.js';
import type { RtspService } from '../../../rtsp/src/service.js';

export const VIDEO_SOURCE_TOKEN = 'video_source';
export const VIDEO_SOURCE_CONFIG_TOKEN = 'video_source_config';

/** One media profile: an encoder configuration on the one video source, and its RTSP path. */
export interface MediaProfile {
  token: string;
  name: string;
  encoding: 'H265' | 'H264';
  encoderToken: string;
  rtspPath: string;
}

/** What every profile shares: the stream the one encoder produces at the camera profile's settings. */
export interface EncoderState {
  width: number;
  height: number;
  fps: number;
  gop: number;
  bitrateKbps: number;
  cbr: boolean;
}

/** Resolutions offered in the encoder options (the profile schema accepts others too). */
export const RESOLUTIONS: readonly [number, number][] = [
  [320, 240],
  [640, 360],
  [640, 480],
  [1280, 720],
  [1920, 1080],
];

/**
 * The H.264 stream's profile as ONVIF names it (tt:H264Profile): the encoder runs libx264 with
 * `-profile:v baseline`, which writes Constrained Baseline (profile_idc 66, constraint_set1); ONVIF's
 * enumeration has no "Constrained" variant, Baseline is the honest name. The H.265 stream is Main.
 */
export const H264_PROFILE = 'Baseline';
export const H265_PROFILE = 'Main';

/** Default RTSP paths when the rtsp plugin does not run (its defaults). */
const DEFAULT_PATHS = { h265: '/preview', h264: '/preview_h264' };

/**
 * The device's media profiles: the H.265 main stream, and an H.264 one beside it (Home Assistant
 * gives up on a camera without H.264) unless the RTSP server says it has no H.264 stream.
 */
export function mediaProfiles(rtsp: RtspService | undefined): MediaProfile[] {
  const paths = rtsp ? rtsp.paths : DEFAULT_PATHS;
  const out: MediaProfile[] = [{ token: 'profile_h265', name: 'MainStream H.265', encoding: 'H265', encoderToken: 'encoder_h265', rtspPath: paths.h265 }];
  if (paths.h264) out.push({ token: 'profile_h264', name: 'MainStream H.264', encoding: 'H264', encoderToken: 'encoder_h264', rtspPath: paths.h264 });
  return out;
}

/**
 * The profiles Media (ver10) may list: tt:VideoEncoding there is JPEG, MPEG4 or H264 only, so the
 * H.265 profile is Media2's alone.
 */
export function media1Profiles(profiles: MediaProfile[]): MediaProfile[] {
  return profiles.filter((p) => p.encoding === 'H264');
}

/**
 * The encoder settings as clients see them: the running stream's size, rate and keyframe interval
 * (the ENCODE_* overrides included), the profile's bitrate and rate control.
 */
export function encoderState(profile: CameraProfile, video: EncodedVideo): EncoderState {
  const [pw, ph] = profile.resolution.split('x').map(Number);
  const live = video.width > 0 && video.height > 0;
  return {
    width: live ? video.width : pw,
    height: live ? video.height : ph,
    fps: video.fps > 0 ? video.fps : profile.fps,
    gop: video.gop > 0 ? video.gop : profile.gop,
    bitrateKbps: profile.bitrate_kbps,
    cbr: profile.rate_control === 'CBR',
  };
}
