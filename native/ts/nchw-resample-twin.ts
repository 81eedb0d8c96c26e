import { rectInside, type PixelRect } from './pixel-rect.js';
import { computeResizeTaps, type ResizeTaps } from './resize-taps.js';

/**
 * The TypeScript twin of the addon's NCHW resampling: a rectangle of a packed BGR888 frame (all of
 * it for the detector's input, a detection for the text cascade's crops) resized, bilinear, to
 * float32 NCHW RGB planes, each value * scale[c] + bias[c]. Tables, buffers and folded constants are
 * built once here; per frame there is no allocation.
 *
 * The resize is separable and streamed by output row: each source row is resampled horizontally
 * once into a small ring (as many rows as the vertical filter has taps), and each output row is a
 * weighted sum of ring rows. The ring stays in cache, which a whole-frame intermediate (4 MB for
 * 640 -> 544) does not.
 */
export class NchwResampleTwin {
  private readonly xTaps: ResizeTaps;
  private readonly yTaps: ResizeTaps;
  private readonly xByteStart: Int32Array;
  /** Ring of horizontally resampled rows: slot * 3 planes (R, G, B) * dstWidth. */
  private readonly ring: Float32Array;
  /** Source row held by each ring slot (-1: none). */
  private readonly ringRow: Int32Array;
  private readonly rowStride: number;

  constructor(
    /** Width of the frames it reads (their row stride is width * 3). */
    readonly frameWidth: number,
    readonly rect: PixelRect,
    readonly dstWidth: number,
    readonly dstHeight: number,
    antialias: boolean,
    private readonly scale: Float64Array,
    private readonly bias: Float64Array,
  ) {
    if (!rectInside(rect, frameWidth, Infinity)) throw new RangeError(`rectangle ${JSON.stringify(rect)} is not inside a frame ${frameWidth} pixels wide`);
    this.xTaps = computeResizeTaps(rect.width, dstWidth, antialias);
    this.yTaps = computeResizeTaps(rect.height, dstHeight, antialias);
    this.xByteStart = this.xTaps.start.map((s) => (rect.x + s) * 3);
    this.ring = new Float32Array(this.yTaps.taps * 3 * dstWidth);
    this.ringRow = new Int32Array(this.yTaps.taps);
    this.rowStride = frameWidth * 3;
  }

  /** Writes the [3, dstHeight, dstWidth] planes for `bgr` into `out` from `at`. */
  run(bgr: Uint8Array, out: Float32Array, at = 0): void {
    if (bgr.length < (this.rect.y + this.rect.height) * this.rowStride) throw new RangeError(`frame of ${bgr.length} bytes ends above the rectangle`);
    if (out.length < at + 3 * this.dstWidth * this.dstHeight) throw new RangeError(`output of ${out.length} values has no room at ${at}`);
    const taps = this.yTaps.taps;
    const yStart = this.yTaps.start;
    this.ringRow.fill(-1);
    for (let oy = 0; oy < this.dstHeight; oy++) {
      const first = yStart[oy];
      for (let t = 0; t < taps; t++) {
        const sy = first + t;
        const slot = sy % taps; // the window slides forward, so its rows never share a slot
        if (this.ringRow[slot] !== sy) {
          this.resampleRow(bgr, sy, slot);
          this.ringRow[slot] = sy;
        }
      }
      this.writeRow(out, at, oy, first);
    }
  }

  /** Row `sy` of the rectangle resampled to dstWidth, split into R, G, B planes of ring slot `slot`. */
  private resampleRow(bgr: Uint8Array, sy: number, slot: number): void {
    const dstWidth = this.dstWidth;
    const ring = this.ring;
    const xStart = this.xByteStart;
    const w = this.xTaps.weights;
    const taps = this.xTaps.taps;
    const rowByte = (this.rect.y + sy) * this.rowStride;
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

  /** Output row `oy` of all three planes from the ring rows first..first+taps-1, scaled and biased. */
  private writeRow(out: Float32Array, at: number, oy: number, first: number): void {
    const { dstWidth, dstHeight } = this;
    const ring = this.ring;
    const w = this.yTaps.weights;
    const taps = this.yTaps.taps;
    const wi = oy * taps;
    const rowStride = 3 * dstWidth;
    const outPlane = dstHeight * dstWidth;
    for (let c = 0; c < 3; c++) {
      const s = this.scale[c];
      const bias = this.bias[c];
      const o = at + c * outPlane + oy * dstWidth;
      const slot = (t: number) => ((first + t) % taps) * rowStride + c * dstWidth;
      if (taps === 1) {
        const a = slot(0);
        const w0 = w[wi] * s;
        for (let ox = 0; ox < dstWidth; ox++) out[o + ox] = w0 * ring[a + ox] + bias;
      } else if (taps === 2) {
        const a = slot(0);
        const b = slot(1);
        const w0 = w[wi] * s;
        const w1 = w[wi + 1] * s;
        for (let ox = 0; ox < dstWidth; ox++) out[o + ox] = w0 * ring[a + ox] + w1 * ring[b + ox] + bias;
      } else if (taps === 3) {
        const a = slot(0);
        const b = slot(1);
        const d = slot(2);
        const w0 = w[wi] * s;
        const w1 = w[wi + 1] * s;
        const w2 = w[wi + 2] * s;
        for (let ox = 0; ox < dstWidth; ox++) out[o + ox] = w0 * ring[a + ox] + w1 * ring[b + ox] + w2 * ring[d + ox] + bias;
      } else {
        for (let ox = 0; ox < dstWidth; ox++) {
          let acc = 0;
          for (let t = 0; t < taps; t++) acc += w[wi + t] * ring[slot(t) + ox];
          out[o + ox] = acc * s + bias;
        }
      }
    }
  }
}
