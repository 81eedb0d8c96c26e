/**
 * Separable bilinear resampling weights, precomputed once per (input, output) size pair.
 *
 * RF-DETR resizes with torchvision's bilinear resize, which antialiases when shrinking: the triangle
 * filter is widened by the scale factor so every source pixel contributes (PIL's BILINEAR does the
 * same). With `antialias` off, or when enlarging, the weights are the classic two-tap half-pixel
 * bilinear. Every output position gets exactly `taps` weights (zero-padded, window shifted inside the
 * image) so the hot loops run a fixed count with no bounds tests.
 */
export interface ResizeTaps {
  inSize: number;
  outSize: number;
  taps: number;
  /** First source index of each output position's window. */
  start: Int32Array;
  /** outSize * taps weights, each window summing to 1. */
  weights: Float32Array;
}

function triangle(x: number): number {
  const a = Math.abs(x);
  return a < 1 ? 1 - a : 0;
}

export function computeResizeTaps(inSize: number, outSize: number, antialias: boolean): ResizeTaps {
  if (!(inSize > 0 && outSize > 0)) throw new RangeError(`resize sizes must be positive (got ${inSize} -> ${outSize})`);
  const scale = inSize / outSize;
  const widen = antialias && scale > 1;
  const support = widen ? scale : 1;
  const invScale = widen ? 1 / scale : 1;

  const windows: { first: number; w: number[] }[] = [];
  let maxTaps = 1;
  for (let i = 0; i < outSize; i++) {
    const center = scale * (i + 0.5);
    const first = Math.max(Math.trunc(center - support + 0.5), 0);
    const last = Math.min(Math.trunc(center + support + 0.5), inSize);
    const w: number[] = [];
    let total = 0;
    for (let j = first; j < last; j++) {
      const v = triangle((j - center + 0.5) * invScale);
      w.push(v);
      total += v;
    }
    // Drop zero-weight ends so the tap count stays small (2 when not widened).
    let lo = 0;
    let hi = w.length;
    while (lo < hi - 1 && w[lo] === 0) lo++;
    while (hi > lo + 1 && w[hi - 1] === 0) hi--;
    const kept = w.slice(lo, hi).map((v) => (total > 0 ? v / total : 1 / (hi - lo)));
    windows.push({ first: first + lo, w: kept });
    maxTaps = Math.max(maxTaps, kept.length);
  }

  const taps = Math.min(maxTaps, inSize);
  const start = new Int32Array(outSize);
  const weights = new Float32Array(outSize * taps);
  for (let i = 0; i < outSize; i++) {
    const { first, w } = windows[i];
    // Shift the window left where padding would run past the image; padded weights stay zero.
    const s = Math.min(first, inSize - taps);
    start[i] = s;
    for (let t = 0; t < w.length; t++) weights[i * taps + (first - s) + t] = w[t]!;
  }
  return { inSize, outSize, taps, start, weights };
}

/**
 * The taps as 4096ths for the uint8 (fixed-point) resampling: each window's running sum is rounded,
 * so every share is >= 0 and a window sums to exactly 4096 whatever its tap count. The native
 * addon's quantizeTaps computes the same numbers in the same double arithmetic.
 */
export function quantizeResizeTaps(t: ResizeTaps): Int32Array {
  const q = new Int32Array(t.weights.length);
  for (let i = 0; i < t.outSize; i++) {
    const base = i * t.taps;
    let total = 0;
    for (let k = 0; k < t.taps; k++) total += t.weights[base + k];
    let running = 0;
    let previous = 0;
    for (let k = 0; k < t.taps; k++) {
      running += t.weights[base + k];
      const bound = k === t.taps - 1 ? 4096 : Math.round((running / total) * 4096);
      q[base + k] = bound - previous;
      previous = bound;
    }
  }
  return q;
}
