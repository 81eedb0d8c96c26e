import type { CameraProfileService } from '../../camera-profile/src/service.js';
import { parseResolution, type EncodeConfig } from './config.js';
import type { EncoderSettings } from './video-encoder.js';

type CameraProfile = ReturnType<CameraProfileService['get']>;

/** Without a camera-profile plugin: the profile a camera ships with (profile-schema's DEFAULT_CAMERA_PROFILE). */
const FALLBACK_PROFILE: Pick<CameraProfile, 'resolution' | 'fps' | 'bitrate_kbps' | 'gop' | 'rate_control'> = {
  resolution: '1920x1080',
  fps: 15,
  bitrate_kbps: 4000,
  gop: 30,
  rate_control: 'VBR',
};

/**
 * What the encoder runs with: the camera profile, each field overridden by its ENCODE_* key when
 * set. The profile's codec is not consulted: recordings and the live stream are H.265 whatever the
 * ONVIF surface announces.
 */
export function encoderSettings(
  profile: Pick<CameraProfile, 'resolution' | 'fps' | 'bitrate_kbps' | 'gop' | 'rate_control'> | undefined,
  config: EncodeConfig,
): EncoderSettings {
  const p = profile ?? FALLBACK_PROFILE;
  const { width, height } = parseResolution(config.ENCODE_RESOLUTION ?? p.resolution);
  return {
    // 4:2:0 needs even sizes.
    width: width - (width % 2),
    height: height - (height % 2),
    fps: config.ENCODE_FPS ?? p.fps,
    gop: config.ENCODE_GOP ?? p.gop,
    bitrateKbps: config.ENCODE_BITRATE_KBPS ?? p.bitrate_kbps,
    rateControl: config.ENCODE_RATE_CONTROL ?? p.rate_control,
  };
}
