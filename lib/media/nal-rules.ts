/** The Annex B streams Lookout records and serves. */
export type AnnexBCodec = 'hevc' | 'h264';

/**
 * How a codec's NAL units group into access units (one picture each), read in place: `at` is where
 * the NAL (without its start code) begins in `b`. The access unit assembler and the picture count's
 * twin both group by these, so they agree to the picture.
 */
export interface NalRules {
  type(b: Uint8Array, at: number): number;
  /** Video coding layer: the slices of a picture. */
  vcl(type: number): boolean;
  /** A picture a decoder (and a chunk) can start from. */
  keyframe(type: number): boolean;
  /** Types that, after a picture's slices, begin the next access unit. */
  beginsAccessUnit(type: number): boolean;
  /** A slice that begins a new picture. */
  firstSliceOfPicture(b: Uint8Array, at: number, length: number): boolean;
}

/** H.265 (7.4.2.4.4): a keyframe is an IRAP picture (BLA, IDR, CRA); a slice's first bit after the two-byte header is first_slice_segment_in_pic_flag. */
export const HEVC_RULES: NalRules = {
  type: (b, at) => (b[at] >> 1) & 0x3f,
  vcl: (t) => t < 32,
  keyframe: (t) => t >= 16 && t <= 23,
  // AUD, VPS/SPS/PPS, prefix SEI, reserved 41..44 and 48..55.
  beginsAccessUnit: (t) => t === 35 || (t >= 32 && t <= 34) || t === 39 || (t >= 41 && t <= 44) || (t >= 48 && t <= 55),
  firstSliceOfPicture: (b, at, length) => length > 2 && (b[at + 2] & 0x80) !== 0,
};

/** H.264 (7.4.1.2.3): a keyframe is an IDR picture; first_mb_in_slice is ue(v) after the one-byte header, so 0 (a new picture) is the single bit 1. */
export const H264_RULES: NalRules = {
  type: (b, at) => b[at] & 0x1f,
  vcl: (t) => t >= 1 && t <= 5,
  keyframe: (t) => t === 5,
  // AUD, SPS, PPS, SEI, 14..18.
  beginsAccessUnit: (t) => t === 9 || t === 7 || t === 8 || t === 6 || (t >= 14 && t <= 18),
  firstSliceOfPicture: (b, at, length) => length > 1 && (b[at + 1] & 0x80) !== 0,
};

export function nalRulesOf(codec: AnnexBCodec): NalRules {
  return codec === 'h264' ? H264_RULES : HEVC_RULES;
}
