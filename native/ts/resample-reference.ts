import type { PixelRect } from './pixel-rect.js';
import { computeResizeTaps, quantizeResizeTaps } from './resize-taps.js';

/**
 * The plain loops the resampling kernels are held to and measured against: every output value
 * computed on its own, straight from the definitions. Slow on purpose; never on the frame path.
 */

/** Source indices and weights for one output position along one axis. */
export function resizeWindow(i: number, inSize: number, outSize: number, antialias: boolean): [number, number][] {
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

/** A rectangle of a packed BGR888 frame to float32 NCHW RGB planes of normalize(value / 255, channel), in float64. */
export function resampleReference(
  bgr: Uint8Array,
  frameWidth: number,
  rect: PixelRect,
  dstWidth: number,
  dstHeight: number,
  antialias: boolean,
  normalize: (value01: number, channel: number) => number,
): Float32Array {
  const out = new Float32Array(3 * dstHeight * dstWidth);
  for (let oy = 0; oy < dstHeight; oy++) {
    const ys = resizeWindow(oy, rect.height, dstHeight, antialias);
    for (let ox = 0; ox < dstWidth; ox++) {
      const xs = resizeWindow(ox, rect.width, dstWidth, antialias);
      for (let c = 0; c < 3; c++) {
        const byteChannel = 2 - c; // RGB plane c comes from BGR byte 2 - c
        let acc = 0;
        for (const [sy, wy] of ys) {
          for (const [sx, wx] of xs) acc += wy * wx * bgr[((rect.y + sy) * frameWidth + rect.x + sx) * 3 + byteChannel];
        }
        out[c * dstHeight * dstWidth + oy * dstWidth + ox] = normalize(acc / 255, c);
      }
    }
  }
  return out;
}

/** The uint8 resampling per output pixel: the double sum over both windows of 4096ths weights, rounded half up. */
export function bgrResampleReference(
  bgr: Uint8Array,
  srcWidth: number,
  srcHeight: number,
  dstWidth: number,
  dstHeight: number,
  antialias: boolean,
): Uint8Array {
  const xt = computeResizeTaps(srcWidth, dstWidth, antialias);
  const yt = computeResizeTaps(srcHeight, dstHeight, antialias);
  const xq = quantizeResizeTaps(xt);
  const yq = quantizeResizeTaps(yt);
  const out = new Uint8Array(dstWidth * dstHeight * 3);
  for (let oy = 0; oy < dstHeight; oy++) {
    for (let ox = 0; ox < dstWidth; ox++) {
      for (let c = 0; c < 3; c++) {
        let acc = 0;
        for (let ty = 0; ty < yt.taps; ty++) {
          for (let tx = 0; tx < xt.taps; tx++) {
            const sy = yt.start[oy] + ty;
            const sx = xt.start[ox] + tx;
            acc += yq[oy * yt.taps + ty] * xq[ox * xt.taps + tx] * bgr[(sy * srcWidth + sx) * 3 + c];
          }
        }
        out[(oy * dstWidth + ox) * 3 + c] = Math.floor((acc + 8388608) / 16777216);
      }
    }
  }
  return out;
}
