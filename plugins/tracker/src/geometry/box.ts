import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';

/** [x1, y1, x2, y2] in pixels. */
export type Box = readonly [number, number, number, number];

/**
 * The box of a detection. `b` may carry more numbers after the first four (spec: readers ignore
 * them). Non-finite coordinates are refused rather than tracked, since one NaN would poison the
 * Kalman state of whatever track it matched.
 */
export function boxOfDetection(det: Detection, index?: number): Box {
  const b = det.b;
  if (!Array.isArray(b) || b.length < 4 || !b.slice(0, 4).every(Number.isFinite)) {
    throw new LookoutError('message_invalid', `detection${index === undefined ? '' : ` ${index}`} has no finite [x1, y1, x2, y2] box`, {
      details: { index, b },
    });
  }
  return [b[0], b[1], b[2], b[3]];
}

export function boxArea(b: Box): number {
  return Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1]);
}

/** Intersection over union; 0 when either box is empty (degenerate boxes never match). */
export function iou(a: Box, b: Box): number {
  const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = boxArea(a) + boxArea(b) - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Row-major |a| x |b| matrix of IoU, the TypeScript twin of the addon's iouMatrix (a flat typed
 * array so that both fill the same layout). With class ids for both sides, a pair of different
 * classes is 0: a person's track never takes a car's box.
 */
export function iouMatrix(a: readonly Box[], b: readonly Box[], classA?: ArrayLike<number> | null, classB?: ArrayLike<number> | null): Float64Array {
  const out = new Float64Array(a.length * b.length);
  const classAware = !!classA && !!classB;
  for (let i = 0; i < a.length; i++) {
    const ai = a[i];
    for (let j = 0; j < b.length; j++) out[i * b.length + j] = classAware && classA[i] !== classB[j] ? 0 : iou(ai, b[j]);
  }
  return out;
}

export function boxCenter(b: Box): [number, number] {
  return [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
}
