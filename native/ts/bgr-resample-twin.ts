import { computeResizeTaps, quantizeResizeTaps, type ResizeTaps } from './resize-taps.js';

/**
 * The TypeScript twin of the addon's uint8 resampling: a packed BGR888 frame to packed BGR888 of
 * another size (the production bake's 640x640 NHWC input), bilinear in fixed point with 4096ths
 * weights. Each output row first combines its source rows (integers, exact), then each value is the
 * horizontal weighted sum rounded half up: integer arithmetic, so the addon's result is the same to
 * the bit. At the same size it is a copy.
 */
export class BgrResampleTwin {
  private readonly xTaps: ResizeTaps;
  private readonly yTaps: ResizeTaps;
  private readonly xq: Int32Array;
  private readonly yq: Int32Array;
  /** One combined row: srcWidth * 3 values of at most 255 * 4096. */
  private readonly row: Uint32Array;

  constructor(
    readonly srcWidth: number,
    readonly srcHeight: number,
    readonly dstWidth: number,
    readonly dstHeight: number,
    antialias: boolean,
  ) {
    this.xTaps = computeResizeTaps(srcWidth, dstWidth, antialias);
    this.yTaps = computeResizeTaps(srcHeight, dstHeight, antialias);
    this.xq = quantizeResizeTaps(this.xTaps);
    this.yq = quantizeResizeTaps(this.yTaps);
    this.row = new Uint32Array(srcWidth * 3);
  }

  run(bgr: Uint8Array, out: Uint8Array): void {
    const rowBytes = this.srcWidth * 3;
    const row = this.row;
    const { xq, yq } = this;
    const xt = this.xTaps.taps;
    const yt = this.yTaps.taps;
    const xStart = this.xTaps.start;
    for (let oy = 0; oy < this.dstHeight; oy++) {
      const first = this.yTaps.start[oy];
      const wi = oy * yt;
      let p = first * rowBytes;
      const w0 = yq[wi];
      for (let i = 0; i < rowBytes; i++) row[i] = w0 * bgr[p + i];
      for (let t = 1; t < yt; t++) {
        p += rowBytes;
        const wt = yq[wi + t];
        for (let i = 0; i < rowBytes; i++) row[i] += wt * bgr[p + i];
      }
      let o = oy * this.dstWidth * 3;
      for (let ox = 0; ox < this.dstWidth; ox++, o += 3) {
        let s = xStart[ox] * 3;
        let w = ox * xt;
        // Sums stay below 255 * 4096 * 4096 < 2^32: exact in a double.
        let a0 = 0;
        let a1 = 0;
        let a2 = 0;
        for (let t = 0; t < xt; t++, s += 3, w++) {
          const q = xq[w];
          a0 += q * row[s];
          a1 += q * row[s + 1];
          a2 += q * row[s + 2];
        }
        out[o] = Math.floor((a0 + 8388608) / 16777216);
        out[o + 1] = Math.floor((a1 + 8388608) / 16777216);
        out[o + 2] = Math.floor((a2 + 8388608) / 16777216);
      }
    }
  }
}
