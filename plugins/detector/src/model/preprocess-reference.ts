import { resampleReference } from 'lookout/native';
import { IMAGENET_MEAN, IMAGENET_STD, type PreprocessOptions, type SizePair } from './normalization.js';

/**
 * The plain twin of Preprocessor: every output value computed on its own, straight from the
 * definitions, in float64, with no tables. Tests hold the fast paths to it; the bench uses it as the
 * baseline. Slow on purpose; never on the frame path.
 */
export function preprocessReference(bgr: Uint8Array, sizes: SizePair, options: PreprocessOptions = {}): Float32Array {
  const { srcWidth, srcHeight, dstWidth, dstHeight } = sizes;
  if (bgr.length !== srcWidth * srcHeight * 3) throw new RangeError(`frame has ${bgr.length} bytes, expected ${srcWidth * srcHeight * 3}`);
  const mean = options.mean ?? IMAGENET_MEAN;
  const std = options.std ?? IMAGENET_STD;
  const frame = { x: 0, y: 0, width: srcWidth, height: srcHeight };
  return resampleReference(bgr, srcWidth, frame, dstWidth, dstHeight, options.antialias ?? true, (v, c) => (v - mean[c]) / std[c]);
}
