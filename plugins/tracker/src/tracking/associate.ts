import type { Box } from '../geometry/box.js';
import { defaultIouKernel, type IouKernel } from '../geometry/iou-kernel.js';
import { solveGatedAssignment } from '../assignment/linear-assignment.js';

export interface Candidate {
  box: Box;
  classId: number;
  /** Extra cost on every pair of this track (a lost track ranks below one seen last frame). */
  penalty?: number;
}

export interface Association {
  matches: Array<[track: number, det: number]>;
  unmatchedTracks: number[];
  unmatchedDets: number[];
}

/**
 * Optimal one-to-one matching of tracks to detections on 1 - IoU, admitting only pairs with IoU at
 * least minIou (and, class-aware, of the same class: a person's track never takes a car's box).
 */
export function associateByIou(
  tracks: readonly Candidate[],
  dets: readonly Candidate[],
  minIou: number,
  classAware: boolean,
  kernel: IouKernel = defaultIouKernel(),
): Association {
  if (tracks.length === 0 || dets.length === 0) {
    return { matches: [], unmatchedTracks: tracks.map((_, i) => i), unmatchedDets: dets.map((_, i) => i) };
  }
  const overlaps = kernel.matrix(
    tracks.map((t) => t.box),
    dets.map((d) => d.box),
    classAware ? tracks.map((t) => t.classId) : null,
    classAware ? dets.map((d) => d.classId) : null,
  );
  const data = new Float64Array(tracks.length * dets.length);
  for (let t = 0; t < tracks.length; t++) {
    const tr = tracks[t];
    for (let d = 0; d < dets.length; d++) {
      const overlap = overlaps[t * dets.length + d];
      // IoU 0 never matches, even with minIou 0: disjoint boxes say nothing about identity.
      // The gate is on IoU alone; the penalty only ranks admissible pairs.
      data[t * dets.length + d] = overlap > 0 && overlap >= minIou ? 1 - overlap + (tr.penalty ?? 0) : Infinity;
    }
  }
  let maxCost = 1 - minIou;
  for (const tr of tracks) maxCost = Math.max(maxCost, 1 - minIou + (tr.penalty ?? 0));
  const g = solveGatedAssignment({ rows: tracks.length, cols: dets.length, data }, maxCost);
  return { matches: g.matches, unmatchedTracks: g.unmatchedRows, unmatchedDets: g.unmatchedCols };
}
