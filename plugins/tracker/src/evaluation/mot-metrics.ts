import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import { iou, type Box } from '../geometry/box.js';
import { solveGatedAssignment } from '../assignment/linear-assignment.js';

/** A ground-truth object in one frame; GroundTruthObject of the camera plugin fits this shape. */
export interface EvalTruth {
  id: number;
  box: Box;
  /** 0 (hidden) to 1; objects below minVisibility are "don't care" (default 1). */
  visibility?: number;
  classId?: number;
}

/** A tracker output in one frame. */
export interface EvalHypothesis {
  id: number;
  box: Box;
  classId?: number;
}

export interface EvalFrame {
  truth: readonly EvalTruth[];
  hypotheses: readonly EvalHypothesis[];
}

export interface MotOptions {
  /** A hypothesis covers a truth object when IoU >= this (default 0.5). */
  iouThreshold?: number;
  /**
   * Truth objects less visible than this are neither required nor penalised: a hypothesis matched to
   * one is dropped, as MOTChallenge does with its distractors (default 0: everything counts).
   */
  minVisibility?: number;
  /** Match only hypotheses and truth of the same class (default false). */
  classAware?: boolean;
}

export interface MotMetrics {
  frames: number;
  /** Truth boxes counted (after don't-care removal). */
  gtBoxes: number;
  hypBoxes: number;
  gtIds: number;
  hypIds: number;
  tp: number;
  fp: number;
  fn: number;
  idSwitches: number;
  /** Tracks interrupted: a truth object covered, then not, then covered again. */
  fragmentations: number;
  /** 1 - (fn + fp + idSwitches) / gtBoxes; may be negative. */
  mota: number;
  /** Mean IoU of the matched pairs. */
  motp: number;
  precision: number;
  recall: number;
  idtp: number;
  idfp: number;
  idfn: number;
  idf1: number;
  idp: number;
  idr: number;
  /** Truth objects covered in at least 80% / at most 20% of their frames. */
  mostlyTracked: number;
  mostlyLost: number;
}

const ratio = (a: number, b: number): number => (b > 0 ? a / b : 0);

/**
 * CLEAR MOT (MOTA, MOTP, id switches) and identity metrics (IDF1, IDP, IDR) over a sequence.
 *
 * CLEAR MOT per frame: a truth object keeps the hypothesis it was last matched to while their IoU
 * stays at or above the threshold; the others are matched optimally (most matches, then highest IoU).
 * An id switch is a truth object matched to a hypothesis other than the one it was last matched to.
 * IDF1: one global one-to-one matching of truth trajectories to hypothesis trajectories that
 * maximises the frames in which matched pairs overlap (IDTP); IDF1 = 2 IDTP / (truth + hypotheses).
 */
export function evaluateMot(frames: readonly EvalFrame[], options: MotOptions = {}): MotMetrics {
  const thr = options.iouThreshold ?? 0.5;
  const minVis = options.minVisibility ?? 0;
  const classAware = options.classAware ?? false;
  if (!(thr > 0 && thr <= 1)) throw new LookoutError('argument_invalid', `iouThreshold must be in (0, 1], got ${thr}`);
  if (!(minVis >= 0 && minVis <= 1)) throw new LookoutError('argument_invalid', `minVisibility must be in [0, 1], got ${minVis}`);

  const overlap = (g: EvalTruth, h: EvalHypothesis): number =>
    classAware && g.classId !== undefined && h.classId !== undefined && g.classId !== h.classId ? 0 : iou(g.box, h.box);

  let gtBoxes = 0,
    hypBoxes = 0,
    tp = 0,
    fp = 0,
    fn = 0,
    idSwitches = 0,
    fragmentations = 0,
    iouSum = 0;
  const lastMatch = new Map<number, number>(); // truth id -> hypothesis id it was last matched to
  const wasCovered = new Map<number, boolean>(); // truth id -> covered in its previous frame
  const framesSeen = new Map<number, number>();
  const framesCovered = new Map<number, number>();
  const pairOverlaps = new Map<number, Map<number, number>>(); // truth id -> hyp id -> frames with IoU >= thr
  const gtIdSet = new Set<number>();
  const hypIdSet = new Set<number>();

  frames.forEach((frame, fi) => {
    checkIds(frame.truth, 'truth', fi);
    checkIds(frame.hypotheses, 'hypothesis', fi);
    // Drop hypotheses that belong to don't-care truth, matched jointly with the counted truth so a
    // box on a visible person is not dropped because a hidden one stands behind it.
    let truth = frame.truth;
    let hyps = frame.hypotheses;
    if (truth.some((g) => (g.visibility ?? 1) < minVis)) {
      const all = matchFrame(truth, hyps, overlap, thr);
      const dropped = new Set<number>();
      for (const [gi, hi] of all) if ((truth[gi].visibility ?? 1) < minVis) dropped.add(hi);
      hyps = hyps.filter((_, hi) => !dropped.has(hi));
      truth = truth.filter((g) => (g.visibility ?? 1) >= minVis);
    }
    gtBoxes += truth.length;
    hypBoxes += hyps.length;
    for (const g of truth) gtIdSet.add(g.id);
    for (const h of hyps) hypIdSet.add(h.id);

    // Keep last frame's correspondences that are still valid, best overlap first.
    const gTaken = new Uint8Array(truth.length);
    const hTaken = new Uint8Array(hyps.length);
    const matched: Array<[number, number]> = [];
    const keep: Array<[number, number, number]> = [];
    truth.forEach((g, gi) => {
      const hid = lastMatch.get(g.id);
      if (hid === undefined) return;
      const hi = hyps.findIndex((h) => h.id === hid);
      if (hi < 0) return;
      const o = overlap(g, hyps[hi]);
      if (o >= thr) keep.push([o, gi, hi]);
    });
    keep.sort((a, b) => b[0] - a[0]);
    for (const [, gi, hi] of keep) {
      if (gTaken[gi] || hTaken[hi]) continue;
      gTaken[gi] = 1;
      hTaken[hi] = 1;
      matched.push([gi, hi]);
    }
    const restG = truth.map((_, i) => i).filter((i) => !gTaken[i]);
    const restH = hyps.map((_, i) => i).filter((i) => !hTaken[i]);
    const fresh = matchFrame(
      restG.map((i) => truth[i]),
      restH.map((i) => hyps[i]),
      overlap,
      thr,
    );
    for (const [a, b] of fresh) {
      const gi = restG[a];
      const hi = restH[b];
      const prev = lastMatch.get(truth[gi].id);
      if (prev !== undefined && prev !== hyps[hi].id) idSwitches += 1;
      matched.push([gi, hi]);
    }

    tp += matched.length;
    fp += hyps.length - matched.length;
    fn += truth.length - matched.length;
    const coveredNow = new Set<number>();
    for (const [gi, hi] of matched) {
      const g = truth[gi];
      iouSum += overlap(g, hyps[hi]);
      lastMatch.set(g.id, hyps[hi].id);
      coveredNow.add(g.id);
    }
    for (const g of truth) {
      framesSeen.set(g.id, (framesSeen.get(g.id) ?? 0) + 1);
      const covered = coveredNow.has(g.id);
      if (covered) {
        framesCovered.set(g.id, (framesCovered.get(g.id) ?? 0) + 1);
        if (wasCovered.get(g.id) === false && (framesCovered.get(g.id) ?? 0) > 1) fragmentations += 1;
      }
      wasCovered.set(g.id, covered);
      // Identity overlaps count every pair above the threshold, independent of the frame's matching.
      for (const h of hyps) {
        if (overlap(g, h) < thr) continue;
        let row = pairOverlaps.get(g.id);
        if (!row) pairOverlaps.set(g.id, (row = new Map<number, number>()));
        row.set(h.id, (row.get(h.id) ?? 0) + 1);
      }
    }
  });

  const idtp = maxIdentityOverlap([...gtIdSet], [...hypIdSet], pairOverlaps);
  const idfn = gtBoxes - idtp;
  const idfp = hypBoxes - idtp;
  let mostlyTracked = 0;
  let mostlyLost = 0;
  for (const [id, seen] of framesSeen) {
    const share = (framesCovered.get(id) ?? 0) / seen;
    if (share >= 0.8) mostlyTracked += 1;
    else if (share <= 0.2) mostlyLost += 1;
  }
  return {
    frames: frames.length,
    gtBoxes,
    hypBoxes,
    gtIds: gtIdSet.size,
    hypIds: hypIdSet.size,
    tp,
    fp,
    fn,
    idSwitches,
    fragmentations,
    mota: gtBoxes > 0 ? 1 - (fn + fp + idSwitches) / gtBoxes : 0,
    motp: ratio(iouSum, tp),
    precision: ratio(tp, tp + fp),
    recall: ratio(tp, tp + fn),
    idtp,
    idfp,
    idfn,
    idf1: ratio(2 * idtp, gtBoxes + hypBoxes),
    idp: ratio(idtp, idtp + idfp),
    idr: ratio(idtp, idtp + idfn),
    mostlyTracked,
    mostlyLost,
  };
}

/** Pairs (truth index, hypothesis index) with IoU >= thr: as many as possible, then the best overlap. */
function matchFrame(
  truth: readonly EvalTruth[],
  hyps: readonly EvalHypothesis[],
  overlap: (g: EvalTruth, h: EvalHypothesis) => number,
  thr: number,
): Array<[number, number]> {
  if (truth.length === 0 || hyps.length === 0) return [];
  const data = new Float64Array(truth.length * hyps.length);
  for (let g = 0; g < truth.length; g++) {
    for (let h = 0; h < hyps.length; h++) {
      const o = overlap(truth[g], hyps[h]);
      data[g * hyps.length + h] = o >= thr ? 1 - o : Infinity;
    }
  }
  return solveGatedAssignment({ rows: truth.length, cols: hyps.length, data }, 1 - thr, { maximizeMatches: true }).matches;
}

function maxIdentityOverlap(gtIds: number[], hypIds: number[], pairs: Map<number, Map<number, number>>): number {
  if (gtIds.length === 0 || hypIds.length === 0) return 0;
  const hypIndex = new Map(hypIds.map((id, i) => [id, i]));
  const data = new Float64Array(gtIds.length * hypIds.length).fill(Infinity);
  gtIds.forEach((gid, g) => {
    for (const [hid, n] of pairs.get(gid) ?? []) data[g * hypIds.length + hypIndex.get(hid)!] = -n;
  });
  const { matches } = solveGatedAssignment({ rows: gtIds.length, cols: hypIds.length, data }, 0);
  let total = 0;
  for (const [g, h] of matches) total -= data[g * hypIds.length + h];
  return total;
}

function checkIds(items: readonly { id: number; box: Box }[], what: string, frame: number): void {
  const seen = new Set<number>();
  for (const it of items) {
    if (!Number.isInteger(it.id)) throw new LookoutError('argument_invalid', `frame ${frame}: ${what} id ${it.id} is not an integer`);
    if (seen.has(it.id)) throw new LookoutError('argument_invalid', `frame ${frame}: ${what} id ${it.id} appears twice`);
    if (!it.box || it.box.length < 4 || !it.box.slice(0, 4).every(Number.isFinite)) {
      throw new LookoutError('argument_invalid', `frame ${frame}: ${what} ${it.id} has no finite box`);
    }
    seen.add(it.id);
  }
}

/** Tracker output as hypotheses: detections with a track_id, the rest are not tracks. */
export function hypothesesFromDetections(dets: readonly Detection[]): EvalHypothesis[] {
  return dets.filter((d) => typeof d.track_id === 'number').map((d) => ({ id: d.track_id!, box: [d.b[0], d.b[1], d.b[2], d.b[3]] as const, classId: d.c }));
}
