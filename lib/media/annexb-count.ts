import { nativeAddon, type NativeAddon } from 'lookout/native';
import { forEachNal } from './annexb-scan.js';
import { nalRulesOf, type AnnexBCodec } from './nal-rules.js';

export interface PictureCount {
  frames: number;
  keyframes: number;
}

/** AnnexBSplitter's default: a NAL longer than this is not a picture anyone can use. */
export const MAX_NAL_BYTES = 32 * 1024 * 1024;

/**
 * The TypeScript twin of the addon's countPictures: pictures and keyframes of a whole Annex B
 * stream, grouped exactly as AnnexBSplitter + AccessUnitAssembler group them (the same NalRules) (bytes before
 * the first start code ignored, trailing zeros stripped, a NAL still open at the end and longer
 * than maxNalBytes dropped: the one scan, forEachNal), without copying a byte.
 */
export function countPicturesTwin(b: Uint8Array, codec: AnnexBCodec = 'hevc', maxNalBytes = MAX_NAL_BYTES): PictureCount {
  const rules = nalRulesOf(codec);
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
