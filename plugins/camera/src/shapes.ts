import type { SceneLabel } from './scenario-classes.js';

/**
 * Silhouettes as a few rectangles and ellipses in box-normalised coordinates (0..1 both ways). Each
 * silhouette touches all four box edges, so the ground-truth box is the tight box of what is drawn.
 */
export interface Primitive {
  kind: 'rect' | 'ellipse';
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const rect = (x0: number, y0: number, x1: number, y1: number): Primitive => ({ kind: 'rect', x0, y0, x1, y1 });
const ellipse = (x0: number, y0: number, x1: number, y1: number): Primitive => ({ kind: 'ellipse', x0, y0, x1, y1 });

const PERSON = [ellipse(0.28, 0, 0.72, 0.2), rect(0, 0.18, 1, 0.6), rect(0.1, 0.58, 0.45, 1), rect(0.55, 0.58, 0.9, 1)];
const CAR = [rect(0.2, 0, 0.8, 0.45), rect(0, 0.4, 1, 0.82), ellipse(0.1, 0.64, 0.3, 1), ellipse(0.7, 0.64, 0.9, 1)];
const BUS = [rect(0, 0, 1, 0.88), ellipse(0.08, 0.76, 0.2, 1), ellipse(0.8, 0.76, 0.92, 1)];
const TRUCK = [rect(0, 0, 0.72, 0.86), rect(0.74, 0.18, 1, 0.86), ellipse(0.08, 0.74, 0.2, 1), ellipse(0.8, 0.74, 0.94, 1)];
const BICYCLE = [ellipse(0, 0.38, 0.38, 1), ellipse(0.62, 0.38, 1, 1), rect(0.25, 0, 0.75, 0.5)];
const BOX = [rect(0, 0, 1, 1)];
const GUN = [rect(0, 0, 1, 0.42), rect(0.66, 0, 0.95, 1)];
const LONG_GUN = [rect(0, 0.2, 1, 0.55), rect(0.72, 0, 1, 1)];
// Handle on the left, blade to the right: scenarios hold knives in the right hand.
const KNIFE = [rect(0, 0, 0.34, 1), rect(0.32, 0.25, 1, 0.75)];

export const SHAPES: Record<SceneLabel, readonly Primitive[]> = {
  person: PERSON,
  bicycle: BICYCLE,
  car: CAR,
  bus: BUS,
  train: BOX,
  truck: TRUCK,
  backpack: BOX,
  handbag: BOX,
  suitcase: BOX,
  cell_phone: BOX,
  gun: GUN,
  knife: KNIFE,
  rifle: LONG_GUN,
  shotgun: LONG_GUN,
  license_plate: BOX,
  sign: BOX,
};

/** Horizontal runs of an object's pixels: row, first column, one past the last column (unclipped). */
export interface Spans {
  /** Triples [y, x0, x1) packed; `count` triples are valid. */
  data: Int32Array;
  count: number;
  /** Pixels of the whole silhouette, including those outside the frame. */
  area: number;
}

const scratchStart = new Float64Array(16);
const scratchEnd = new Float64Array(16);

/**
 * Rasterises a silhouette into merged row spans. A pixel belongs to the shape when its centre lies
 * inside; work is per row, not per pixel, so large objects cost little.
 */
export function silhouetteSpans(shape: readonly Primitive[], box: readonly [number, number, number, number]): Spans {
  const [bx1, by1, bx2, by2] = box;
  const w = bx2 - bx1;
  const h = by2 - by1;
  const rowStart = Math.ceil(by1 - 0.5);
  const rowEnd = Math.ceil(by2 - 0.5);
  const rows = Math.max(0, rowEnd - rowStart);
  const data = new Int32Array(rows * shape.length * 3);
  let count = 0;
  let area = 0;
  if (w <= 0 || h <= 0) return { data, count, area };
  for (let y = rowStart; y < rowEnd; y++) {
    const v = (y + 0.5 - by1) / h;
    let n = 0;
    for (const p of shape) {
      let u0: number, u1: number;
      if (p.kind === 'rect') {
        if (v < p.y0 || v >= p.y1) continue;
        u0 = p.x0;
        u1 = p.x1;
      } else {
        const ry = (p.y1 - p.y0) / 2;
        const dv = (v - (p.y0 + ry)) / ry;
        if (dv <= -1 || dv >= 1) continue;
        const rx = (p.x1 - p.x0) / 2;
        const half = rx * Math.sqrt(1 - dv * dv);
        u0 = p.x0 + rx - half;
        u1 = p.x0 + rx + half;
      }
      const x0 = Math.ceil(bx1 + u0 * w - 0.5);
      const x1 = Math.ceil(bx1 + u1 * w - 0.5);
      if (x1 <= x0) continue;
      // Insertion sort by start: a row has at most a handful of runs.
      let j = n++;
      while (j > 0 && scratchStart[j - 1] > x0) {
        scratchStart[j] = scratchStart[j - 1]!;
        scratchEnd[j] = scratchEnd[j - 1]!;
        j--;
      }
      scratchStart[j] = x0;
      scratchEnd[j] = x1;
    }
    let i = 0;
    while (i < n) {
      const s = scratchStart[i];
      let e = scratchEnd[i];
      i++;
      while (i < n && scratchStart[i] <= e) e = Math.max(e, scratchEnd[i++]);
      data[count * 3] = y;
      data[count * 3 + 1] = s;
      data[count * 3 + 2] = e;
      count++;
      area += e - s;
    }
  }
  return { data, count, area };
}
