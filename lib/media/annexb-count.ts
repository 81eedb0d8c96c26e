import { nativeAddon, type NativeAddon } from 'lookout/native';
import { forEachNal } from './annexb-scan.js';

/** The Annex B streams Lookout records and serves. */
export type AnnexBCodec = 'hevc' | 'h264';

export interface PictureCount {
  frames: number;
  keyframes: number;
}

/** AnnexBSplitter's default: a NAL longer than this is not a picture anyone can use. */
export const MAX_NAL_BYTES = 32 * 1024 * 1024;

interface NalRules {
  type(nal: Uint8Array, at: number): number;
  vcl(type: number): boolean;
  keyframe(type: number): boolean;
  beginsAccessUnit(type: number): boolean;
  firstSliceOfPicture(nal: Uint8Array, at: number, length: number): boolean;
}

/** H.265 (7.4.2.4.4): as core's AccessUnitAssembler groups NAL units; a keyframe is an IRAP picture. */
const HEVC: NalRules = {
  type: (b, at) => (b[at] >> 1) & 0x3f,
  vcl: (t) => t < 32,
  keyframe: (t) => t >= 16 && t <= 23,
  beginsAccessUnit: (t) => t === 35 || (t >= 32 && t <= 34) || t === 39 || (t >= 41 && t <= 44) || (t >= 48 && t <= 55),
  firstSliceOfPicture: (b, at, length) => length > 2 && (b[at + 2] & 0x80) !== 0,
};

/** H.264 (7.4.1.2.3): as the encode plugin's H264AccessUnitAssembler groups them; a keyframe is an IDR picture. */
const H264: NalRules = {
  type: (b, at) => b[at] & 0x1f,
  vcl: (t) => t >= 1 && t <= 5,
  keyframe: (t) => t === 5,
  beginsAccessUnit: (t) => t === 9 || t === 7 || t === 8 || t === 6 || (t >= 14 && t <= 18),
  firstSliceOfPicture: (b, at, length) => length > 1 && (b[at + 1] & 0x80) !== 0,
};

/**
 * The TypeScript twin of the addon's countPictures: pictures and keyframes of a whole Annex B
 * stream, grouped exactly as AnnexBSplitter + the access unit assemblers group them (bytes before
 * the first start code ignored, trailing zeros stripped, a NAL still open at the end and longer
 * than maxNalBytes dropped: the one scan, forEachNal), without copying a byte.
 */
export function countPicturesTwin(b: Uint8Array, codec: AnnexBCodec = 'hevc', maxNalBytes = MAX_NAL_BYTES): PictureCount {
  const rules = codec === 'h264' ? H264 : HEVC;
  const count: PictureCount = { frames: 0, keyframes: 0 };
  let hasVcl = false;
  let keyframe = false;
  const flush = () => {
    if (hasVcl) {
      count.frames++;
      if (keyframe) count.keyframes++;
    }
    hasVcl = false;
    keyframe = false;
  };
  // forEachNal strips trailing zeros and skips empty units; one byte is no NAL header either.
  forEachNal(
    b,
    (at, end) => {
      const length = end - at;
      if (length < 2) return;
      const type = rules.type(b, at);
      const vcl = rules.vcl(type);
      if (hasVcl && (rules.beginsAccessUnit(type) || (vcl && rules.firstSliceOfPicture(b, at, length)))) flush();
      if (vcl) {
        hasVcl = true;
        if (rules.keyframe(type)) keyframe = true;
      }
    },
    maxNalBytes,
  );
  flush();
  return count;
}

/** The addon's count (native) or the twin's; both are the assemblers' count to the picture. */
export function countPicturesWith(addon: NativeAddon | null, stream: Uint8Array, codec: AnnexBCodec = 'hevc', maxNalBytes = MAX_NAL_BYTES): PictureCount {
  if (!addon) return countPicturesTwin(stream, codec, maxNalBytes);
  return addon.countPictures(stream, codec === 'h264' ? 1 : 0, maxNalBytes);
}

/** Pictures and keyframes of an Annex B stream, counted from its NAL units (the recorder's sidecars). */
export function countPictures(stream: Uint8Array, codec: AnnexBCodec = 'hevc'): PictureCount {
  return countPicturesWith(nativeAddon(), stream, codec);
}
