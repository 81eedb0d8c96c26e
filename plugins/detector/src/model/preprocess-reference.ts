import { IMAGENET_MEAN, IMAGENET_STD, type PreprocessOptions, type SizePair } from './normalization.js';

/**
 * The plain twin of Preprocessor: every output value computed on its own, straight from the
 * definitions, in float64, with no tables. Tests hold the fast path to it; the bench uses it as the
 * baseline. Slow on purpose; never on the frame path.
 */
export function preprocessReference(bgr: Uint8Array, sizes: SizePair, options: PreprocessOptions = {}): Float32Array {
  const { srcWidth, srcHeight, dstWidth, dstHeight } = sizes;
  if (bgr.length !== srcWidth * srcHeight * 3) throw new RangeError(`frame has ${bgr.length} bytes, expected ${srcWidth * srcHeight * 3}`);
  const antialias = options.antialias ?? true;
  const mean = options.mean ?? IMAGENET_MEAN;
  const std = options.std ?? IMAGENET_STD;
  const out = new Float32Array(3 * dstHeight * dstWidth);

  for (let oy = 0; oy < dstHeight; oy++) {
    const ys = window1d(oy, srcHeight, dstHeight, antialias);
    for (let ox = 0; ox < dstWidth; ox++) {
      const xs = window1d(ox, srcWidth, dstWidth, antialias);
      for (let c = 0; c < 3; c++) {
        const byteChannel = 2 - c; // RGB plane c comes from BGR byte 2 - c
        let acc = 0;
        for (const [sy, wy] of ys) {
          for (const [sx, wx] of xs) acc += wy * wx * bgr[(sy * srcWidth + sx) * 3 + byteChannel];
        }
        out[c * dstHeight * dstWidth + oy * dstWidth + ox] = (acc / 255 - mean[c]) / std[c];
      }
    }
  }
  return out;
}

/** Source indices and weights for one output position along one axis. */
function window1d(i: number, inSize: number, outSize: number, antialias: boolean): [number, number][] {
  const scale = inSize / outSize;
  if (!antialias || scale <= 1) {
    // Half-pixel-centre two-tap bilinear, clamped at the borders.
    const src = Math.max((i + 0.5) * scale - 0.5, 0);
    const x0 = Math.min(Math.floor(src), inSize - 1);
    const x1 = Math.min(x0 + 1, inSize - 1);
    const f = src - x0;
    return x0 === x1
      ? [[x0, 1]]
      : [
          [x0, 1 - f],
          [x1, f],
        ];
  }
  // Shrinking with antialias: a triangle filter as wide as the scale, renormalized at the borders.
  const center = (i + 0.5) * scale;
  const taps: [number, number][] = [];
  let total = 0;
  const lo = Math.max(0, Math.floor(center - scale - 1));
  const hi = Math.min(inSize - 1, Math.ceil(center + scale + 1));
  for (let j = lo; j <= hi; j++) {
    const d = Math.abs((j + 0.5 - center) / scale);
    if (d < 1) {
      taps.push([j, 1 - d]);
      total += 1 - d;
    }
  }
  return taps.map(([j, w]) => [j, w / total]);
}
