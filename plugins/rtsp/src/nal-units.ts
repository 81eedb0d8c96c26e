import { nalUnitsOf } from 'lookout/lib/media';

/** The codecs the preview serves, with how their NAL headers read. */
export type VideoCodec = 'h265' | 'h264';

export function nalTypeOf(codec: VideoCodec, nal: Buffer): number {
  return codec === 'h265' ? (nal[0] >> 1) & 0x3f : nal[0] & 0x1f;
}

/** The parameter sets a keyframe carries (H.265: VPS, SPS, PPS; H.264: SPS, PPS), for the SDP. */
export interface ParameterSets {
  vps?: Buffer;
  sps: Buffer;
  pps: Buffer;
}

export function parameterSetsOf(codec: VideoCodec, keyframe: Buffer): ParameterSets | undefined {
  let vps: Buffer | undefined;
  let sps: Buffer | undefined;
  let pps: Buffer | undefined;
  for (const nal of nalUnitsOf(keyframe)) {
    const type = nalTypeOf(codec, nal);
    if (codec === 'h265') {
      if (type === 32) vps ??= nal;
      else if (type === 33) sps ??= nal;
      else if (type === 34) pps ??= nal;
    } else if (type === 7) sps ??= nal;
    else if (type === 8) pps ??= nal;
  }
  if (!sps || !pps || (codec === 'h265' && !vps)) return undefined;
  return { ...(vps ? { vps } : {}), sps, pps };
}
