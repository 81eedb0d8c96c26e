import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { CameraIntrinsics } from '../../camera/src/service.js';

/** [x1, y1, x2, y2] in pixels of the detector frame. */
export type Box = readonly [number, number, number, number];

export interface Size {
  width: number;
  height: number;
}

/**
 * Metres along the optical axis per pixel, row-major. A value that is not finite or not positive is
 * a hole (no depth there), as monocular and stereo depth maps both have.
 */
export interface DepthMap extends Size {
  data: ArrayLike<number>;
}

/** Part of a box to sample, as fractions of its width (left, right) and height (top, bottom). */
export interface SampleRegion {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/**
 * The lower-central part of the box: its edges hold background, a person's head and raised arms
 * are narrow, and the lowest strip often holds the ground in front. What is left is mostly the
 * object's own body, so the median there is the object's depth, not its surroundings'.
 */
export const LOWER_CENTRAL_REGION: Readonly<SampleRegion> = Object.freeze({ left: 0.25, right: 0.75, top: 0.5, bottom: 0.9 });

export interface Point3 {
  x: number;
  y: number;
  z: number;
}

export function checkIntrinsics(k: CameraIntrinsics): CameraIntrinsics {
  if (!(Number.isFinite(k.fx) && k.fx > 0 && Number.isFinite(k.fy) && k.fy > 0 && Number.isFinite(k.cx) && Number.isFinite(k.cy))) {
    throw new LookoutError('config_invalid', `camera intrinsics need positive finite fx, fy and finite cx, cy; got ${JSON.stringify(k)}`);
  }
  return k;
}

/** Intrinsics of the same camera at another resolution (the depth model's input, the substream). */
export function scaleIntrinsics(k: CameraIntrinsics, from: Size, to: Size): CameraIntrinsics {
  const sx = to.width / from.width;
  const sy = to.height / from.height;
  if (!(Number.isFinite(sx) && sx > 0 && Number.isFinite(sy) && sy > 0)) {
    throw new LookoutError('argument_invalid', `cannot scale intrinsics from ${from.width}x${from.height} to ${to.width}x${to.height}`);
  }
  return { fx: k.fx * sx, fy: k.fy * sy, cx: k.cx * sx, cy: k.cy * sy };
}

/**
 * Median depth of the valid pixels in a region of the box. `frame` is the size of the image the box
 * is in; the depth map may be smaller (models run at low resolution) and the box is scaled to it.
 * Undefined when the region holds no valid depth.
 */
export function medianDepthInBox(map: DepthMap, box: Box, frame: Size, region: SampleRegion = LOWER_CENTRAL_REGION): number | undefined {
  if (map.data.length !== map.width * map.height || map.width < 1 || map.height < 1) {
    throw new LookoutError('argument_invalid', `depth map ${map.width}x${map.height} does not fit ${map.data.length} values`);
  }
  if (!box.slice(0, 4).every(Number.isFinite)) throw new LookoutError('argument_invalid', 'box coordinates must be finite');
  // Only the part of the box inside the frame was seen: the region is taken of that part.
  const bx1 = clamp(box[0], 0, frame.width);
  const bx2 = clamp(box[2], 0, frame.width);
  const by1 = clamp(box[1], 0, frame.height);
  const by2 = clamp(box[3], 0, frame.height);
  if (bx2 <= bx1 || by2 <= by1) return undefined;
  const sx = map.width / frame.width;
  const sy = map.height / frame.height;
  const bw = bx2 - bx1;
  const bh = by2 - by1;
  const rx1 = (bx1 + region.left * bw) * sx;
  const rx2 = (bx1 + region.right * bw) * sx;
  const ry1 = (by1 + region.top * bh) * sy;
  const ry2 = (by1 + region.bottom * bh) * sy;
  // Pixels whose centres fall inside the region; a region smaller than a pixel takes the pixel under its centre.
  let [x0, x1] = pixelSpan(rx1, rx2);
  let [y0, y1] = pixelSpan(ry1, ry2);
  x0 = clamp(x0, 0, map.width - 1);
  x1 = clamp(x1, 0, map.width - 1);
  y0 = clamp(y0, 0, map.height - 1);
  y1 = clamp(y1, 0, map.height - 1);
  const values = new Float64Array((x1 - x0 + 1) * (y1 - y0 + 1));
  let n = 0;
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const d = map.data[y * map.width + x];
      if (Number.isFinite(d) && d > 0) values[n++] = d;
    }
  }
  if (n === 0) return undefined;
  const sorted = values.subarray(0, n).sort();
  return n % 2 === 1 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

function pixelSpan(a: number, b: number): [number, number] {
  const first = Math.ceil(a - 0.5);
  const last = Math.ceil(b - 0.5) - 1;
  if (last >= first) return [first, last];
  const mid = Math.floor((a + b) / 2);
  return [mid, mid];
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/**
 * Pinhole back-projection of the box centre at a depth along the optical axis: x right of the axis,
 * y below it (image rows grow downwards), z along it, all in metres.
 */
export function backProject(box: Box, depthM: number, k: CameraIntrinsics): Point3 {
  if (!(Number.isFinite(depthM) && depthM > 0)) throw new LookoutError('argument_invalid', `depth must be a positive number of metres, got ${depthM}`);
  checkIntrinsics(k);
  const u = (box[0] + box[2]) / 2;
  const v = (box[1] + box[3]) / 2;
  return { x: ((u - k.cx) * depthM) / k.fx, y: ((v - k.cy) * depthM) / k.fy, z: depthM };
}

/** Millimetres are far finer than monocular depth can tell, and keep each dets message short. */
const mm = (v: number): number => Math.round(v * 1000) / 1000;

/**
 * The detection with x, y, z added, or unchanged (and without stale x, y, z) when there is no usable
 * depth for it: a hole in the depth map is normal and must not drop the detection.
 */
export function fuseDetection(det: Detection, depthM: number | undefined, k: CameraIntrinsics): Detection {
  const { x: _x, y: _y, z: _z, ...rest } = det;
  if (depthM === undefined || !(Number.isFinite(depthM) && depthM > 0)) return rest;
  const b = det.b;
  const p = backProject([b[0], b[1], b[2], b[3]], depthM, k);
  return { ...rest, x: mm(p.x), y: mm(p.y), z: mm(p.z) };
}
