import { computeResizeTaps, type ResizeTaps } from './resize-taps.js';
import { IMAGENET_MEAN, IMAGENET_STD, type PreprocessOptions, type SizePair } from './normalization.js';

/**
 * Packed BGR888 frame -> NCHW float32 RGB model input, resized (bilinear), scaled to 0..1 and
 * normalized. Runs once per detector frame, so everything that does not depend on pixel values (tap
 * tables, buffers, the output tensor, folded scale/bias) is built once here; per frame there is no
 * allocation.
 *
 * The resize is separable and streamed by output row: each source row is resampled horizontally
 * once into a small ring (as many rows as the vertical filter has taps), and each output row is a
 * weighted sum of ring rows. The ring stays in cache, which a whole-frame intermediate (4 MB for
 * 640 -> 544) does not.
 */
export class Preprocessor {
  readonly sizes: SizePair;
  /** [1, 3, dstHeight, dstWidth], reused by every `run`. */
  readonly output: Float32Array;
  private readonly xTaps: ResizeTaps;
  private readonly yTaps: ResizeTaps;
  private readonly xByteStart: Int32Array;
  /** Ring of horizontally resampled rows: slot * 3 planes (R, G, B) * dstWidth. */
  private readonly ring: Float32Array;
  /** Source row held by each ring slot (-1: none). */
  private readonly ringRow: Int32Array;
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
    this.ring = new Float32Array(this.yTaps.taps * 3 * dstWidth);
    this.ringRow = new Int32Array(this.yTaps.taps);
    this.output = new Float32Array(3 * dstHeight * dstWidth);
    // (v / 255 - mean) / std == v * scale + bias; bilinear weights sum to 1, so this can follow the resize.
    this.scale = Float64Array.from([0, 1, 2], (c) => 1 / (255 * std[c]));
    this.bias = Float64Array.from([0, 1, 2], (c) => -mean[c] / std[c]);
  }

  /** Writes the model input for `bgr` into `out` (default: this.output) and returns it. */
  run(bgr: Uint8Array, out: Float32Array = this.output): Float32Array {
    const { srcWidth, srcHeight, dstWidth, dstHeight } = this.sizes;
    if (bgr.length !== srcWidth * srcHeight * 3) {
      throw new RangeError(`frame has ${bgr.length} bytes, expected ${srcWidth}x${srcHeight}x3 = ${srcWidth * srcHeight * 3}`);
    }
    if (out.length !== 3 * dstWidth * dstHeight) throw new RangeError(`output tensor has ${out.length} values, expected ${3 * dstWidth * dstHeight}`);
    const taps = this.yTaps.taps;
    const yStart = this.yTaps.start;
    this.ringRow.fill(-1);
    for (let oy = 0; oy < dstHeight; oy++) {
      const first = yStart[oy];
      for (let t = 0; t < taps; t++) {
        const sy = first + t;
        const slot = sy % taps; // the window slides forward, so its rows never share a slot
        if (this.ringRow[slot] !== sy) {
          this.resampleRow(bgr, sy, slot);
          this.ringRow[slot] = sy;
        }
      }
      this.writeRow(out, oy, first);
    }
    return out;
  }

  /** Source row `sy` resampled to dstWidth, split into R, G, B planes of ring slot `slot`. */
  private resampleRow(bgr: Uint8Array, sy: number, slot: number): void {
    const { srcWidth, dstWidth } = this.sizes;
    const ring = this.ring;
    const xStart = this.xByteStart;
    const w = this.xTaps.weights;
    const taps = this.xTaps.taps;
    const rowByte = sy * srcWidth * 3;
    const r0 = slot * 3 * dstWidth;
    const g0 = r0 + dstWidth;
    const b0 = g0 + dstWidth;
    if (taps === 3) {
      // The antialiased 640 -> 544 shrink: unrolled, this loop is most of the frame's work.
      for (let ox = 0, wi = 0; ox < dstWidth; ox++, wi += 3) {
        const p = rowByte + xStart[ox];
        const w0 = w[wi];
        const w1 = w[wi + 1];
        const w2 = w[wi + 2];
        ring[r0 + ox] = w0 * bgr[p + 2] + w1 * bgr[p + 5] + w2 * bgr[p + 8];
        ring[g0 + ox] = w0 * bgr[p + 1] + w1 * bgr[p + 4] + w2 * bgr[p + 7];
        ring[b0 + ox] = w0 * bgr[p] + w1 * bgr[p + 3] + w2 * bgr[p + 6];
      }
    } else if (taps === 2) {
      for (let ox = 0, wi = 0; ox < dstWidth; ox++, wi += 2) {
        const p = rowByte + xStart[ox];
        const w0 = w[wi];
        const w1 = w[wi + 1];
        ring[r0 + ox] = w0 * bgr[p + 2] + w1 * bgr[p + 5];
        ring[g0 + ox] = w0 * bgr[p + 1] + w1 * bgr[p + 4];
        ring[b0 + ox] = w0 * bgr[p] + w1 * bgr[p + 3];
      }
    } else if (taps === 1) {
      // Same width (the 640 production input): a de-interleave.
      for (let ox = 0; ox < dstWidth; ox++) {
        const p = rowByte + xStart[ox];
        const w0 = w[ox];
        ring[r0 + ox] = w0 * bgr[p + 2];
        ring[g0 + ox] = w0 * bgr[p + 1];
        ring[b0 + ox] = w0 * bgr[p];
      }
    } else {
      for (let ox = 0; ox < dstWidth; ox++) {
        let p = rowByte + xStart[ox];
        let wi = ox * taps;
        let b = 0;
        let g = 0;
        let r = 0;
        for (let t = 0; t < taps; t++, p += 3, wi++) {
          const wt = w[wi];
          b += wt * bgr[p];
          g += wt * bgr[p + 1];
          r += wt * bgr[p + 2];
        }
        ring[r0 + ox] = r;
        ring[g0 + ox] = g;
        ring[b0 + ox] = b;
      }
    }
  }

  /** Output row `oy` of all three planes from the ring rows first..first+taps-1, normalized. */
  private writeRow(out: Float32Array, oy: number, first: number): void {
    const { dstWidth, dstHeight } = this.sizes;
    const ring = this.ring;
    const w = this.yTaps.weights;
    const taps = this.yTaps.taps;
    const wi = oy * taps;
    const rowStride = 3 * dstWidth;
    const outPlane = dstHeight * dstWidth;
    for (let c = 0; c < 3; c++) {
      const s = this.scale[c];
      const bias = this.bias[c];
      const o = c * outPlane + oy * dstWidth;
      const at = (t: number) => ((first + t) % taps) * rowStride + c * dstWidth;
      if (taps === 1) {
        const a = at(0);
        const w0 = w[wi] * s;
        for (let ox = 0; ox < dstWidth; ox++) out[o + ox] = w0 * ring[a + ox] + bias;
      } else if (taps === 2) {
        const a = at(0);
        const b = at(1);
        const w0 = w[wi] * s;
        const w1 = w[wi + 1] * s;
        for (let ox = 0; ox < dstWidth; ox++) out[o + ox] = w0 * ring[a + ox] + w1 * ring[b + ox] + bias;
      } else if (taps === 3) {
        const a = at(0);
        const b = at(1);
        const d = at(2);
        const w0 = w[wi] * s;
        const w1 = w[wi + 1] * s;
        const w2 = w[wi + 2] * s;
        for (let ox = 0; ox < dstWidth; ox++) out[o + ox] = w0 * ring[a + ox] + w1 * ring[b + ox] + w2 * ring[d + ox] + bias;
      } else {
        for (let ox = 0; ox < dstWidth; ox++) {
          let acc = 0;
          for (let t = 0; t < taps; t++) acc += w[wi + t] * ring[at(t) + ox];
          out[o + ox] = acc * s + bias;
        }
      }
    }
  }
}
