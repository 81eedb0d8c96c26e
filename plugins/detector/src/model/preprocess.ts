import { computeResizeTaps, type ResizeTaps } from './resize-taps.js';
import { IMAGENET_MEAN, IMAGENET_STD, type PreprocessOptions, type SizePair } from './normalization.js';

/**
 * Packed BGR888 frame -> NCHW float32 RGB model input, resized (bilinear), scaled to 0..1 and
 * normalized. Runs once per detector frame, so everything that does not depend on pixel values (tap
 * tables, the intermediate buffer, the output tensor, folded scale/bias) is built once here and the
 * per-frame work is two separable passes over typed arrays with no allocation.
 */
export class Preprocessor {
  readonly sizes: SizePair;
  /** [1, 3, dstHeight, dstWidth], reused by every `run`. */
  readonly output: Float32Array;
  private readonly xTaps: ResizeTaps;
  private readonly yTaps: ResizeTaps;
  /** Horizontally resampled source rows, planar R, G, B: 3 * srcHeight * dstWidth. */
  private readonly rows: Float32Array;
  private readonly xByteStart: Int32Array;
  private readonly scale: Float64Array;
  private readonly bias: Float64Array;

  constructor(sizes: SizePair, options: PreprocessOptions = {}) {
    const { srcWidth, srcHeight, dstWidth, dstHeight } = sizes;
    for (const [k, v] of Object.entries(sizes)) {
      if (!Number.isInteger(v) || v <= 0) throw new RangeError(`preprocess ${k} must be a positive integer (got ${v})`);
    }
    this.sizes = { ...sizes };
    const antialias = options.antialias ?? true;
    const mean = options.mean ?? IMAGENET_MEAN;
    const std = options.std ?? IMAGENET_STD;
    this.xTaps = computeResizeTaps(srcWidth, dstWidth, antialias);
    this.yTaps = computeResizeTaps(srcHeight, dstHeight, antialias);
    this.xByteStart = this.xTaps.start.map((s) => s * 3);
    this.rows = new Float32Array(3 * srcHeight * dstWidth);
    this.output = new Float32Array(3 * dstHeight * dstWidth);
    // (v / 255 - mean) / std == v * scale + bias; bilinear weights sum to 1, so this can follow the resize.
    this.scale = Float64Array.from([0, 1, 2], (c) => 1 / (255 * std[c]!));
    this.bias = Float64Array.from([0, 1, 2], (c) => -mean[c]! / std[c]!);
  }

  /** Writes the model input for `bgr` into `out` (default: this.output) and returns it. */
  run(bgr: Uint8Array, out: Float32Array = this.output): Float32Array {
    const { srcWidth, srcHeight, dstWidth, dstHeight } = this.sizes;
    if (bgr.length !== srcWidth * srcHeight * 3) {
      throw new RangeError(`frame has ${bgr.length} bytes, expected ${srcWidth}x${srcHeight}x3 = ${srcWidth * srcHeight * 3}`);
    }
    if (out.length !== 3 * dstWidth * dstHeight) throw new RangeError(`output tensor has ${out.length} values, expected ${3 * dstWidth * dstHeight}`);
    this.horizontal(bgr);
    this.vertical(out);
    return out;
  }

  private horizontal(bgr: Uint8Array): void {
    const { srcWidth, srcHeight, dstWidth } = this.sizes;
    const rows = this.rows;
    const xStart = this.xByteStart;
    const w = this.xTaps.weights;
    const taps = this.xTaps.taps;
    const plane = srcHeight * dstWidth;
    for (let sy = 0; sy < srcHeight; sy++) {
      const rowByte = sy * srcWidth * 3;
      const outRow = sy * dstWidth;
      for (let ox = 0; ox < dstWidth; ox++) {
        let p = rowByte + xStart[ox]!;
        let wi = ox * taps;
        let b = 0;
        let g = 0;
        let r = 0;
        for (let t = 0; t < taps; t++, p += 3, wi++) {
          const wt = w[wi]!;
          b += wt * bgr[p]!;
          g += wt * bgr[p + 1]!;
          r += wt * bgr[p + 2]!;
        }
        const o = outRow + ox;
        rows[o] = r;
        rows[plane + o] = g;
        rows[2 * plane + o] = b;
      }
    }
  }

  private vertical(out: Float32Array): void {
    const { srcHeight, dstWidth, dstHeight } = this.sizes;
    const rows = this.rows;
    const yStart = this.yTaps.start;
    const w = this.yTaps.weights;
    const taps = this.yTaps.taps;
    const inPlane = srcHeight * dstWidth;
    const outPlane = dstHeight * dstWidth;
    for (let c = 0; c < 3; c++) {
      const s = this.scale[c]!;
      const bias = this.bias[c]!;
      const inBase = c * inPlane;
      const outBase = c * outPlane;
      for (let oy = 0; oy < dstHeight; oy++) {
        const first = inBase + yStart[oy]! * dstWidth;
        const o = outBase + oy * dstWidth;
        const wi = oy * taps;
        if (taps === 2) {
          const w0 = w[wi]!;
          const w1 = w[wi + 1]!;
          const r1 = first + dstWidth;
          for (let ox = 0; ox < dstWidth; ox++) {
            out[o + ox] = (w0 * rows[first + ox]! + w1 * rows[r1 + ox]!) * s + bias;
          }
        } else if (taps === 3) {
          const w0 = w[wi]!;
          const w1 = w[wi + 1]!;
          const w2 = w[wi + 2]!;
          const r1 = first + dstWidth;
          const r2 = r1 + dstWidth;
          for (let ox = 0; ox < dstWidth; ox++) {
            out[o + ox] = (w0 * rows[first + ox]! + w1 * rows[r1 + ox]! + w2 * rows[r2 + ox]!) * s + bias;
          }
        } else {
          for (let ox = 0; ox < dstWidth; ox++) {
            let acc = 0;
            for (let t = 0, r = first + ox; t < taps; t++, r += dstWidth) acc += w[wi + t]! * rows[r]!;
            out[o + ox] = acc * s + bias;
          }
        }
      }
    }
  }
}
