import { seededRandom } from 'lookout/lib/random';
import { SPLITS, type Split } from './formats/source-frame.js';

export interface ClipSummary {
  clip: string;
  frames: number;
  /** Class ids with at least one box in the clip. */
  classes: ReadonlySet<number>;
}

export interface SplitPlan {
  ratios: Readonly<Record<Split, number>>;
  seed: number;
}

export interface SplitResult {
  /** Clip → split: every frame of a clip goes where its clip goes. */
  assignment: Map<string, Split>;
  /** Classes with too few clips to reach every split (fewer clips than splits in use). */
  tooFewClips: number[];
}

/**
 * Sequence-aware, stratified split. Clips are the unit (frames of one clip are near-duplicates: split
 * apart, validation would score memorised frames). Rare classes first: every class with at least as
 * many clips as splits in use gets one clip in each split that lacks it, taking the smallest such clip
 * so the frame ratios move least; the other clips then go, in a seeded shuffle, to whichever split is
 * furthest below its share of frames.
 */
export function sequenceSplit(clips: readonly ClipSummary[], plan: SplitPlan): SplitResult {
  const used = SPLITS.filter((s) => plan.ratios[s] > 0);
  const random = seededRandom(plan.seed);
  const order = [...clips].sort((a, b) => (a.clip < b.clip ? -1 : a.clip > b.clip ? 1 : 0));
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const total = order.reduce((n, c) => n + c.frames, 0);
  const ratioSum = used.reduce((n, s) => n + plan.ratios[s], 0);
  const target = Object.fromEntries(used.map((s) => [s, (plan.ratios[s] / ratioSum) * total])) as Record<Split, number>;
  const frames = Object.fromEntries(used.map((s) => [s, 0])) as Record<Split, number>;
  const holds = new Map<Split, Set<number>>(used.map((s) => [s, new Set<number>()]));
  const assignment = new Map<string, Split>();
  const assign = (c: ClipSummary, s: Split) => {
    assignment.set(c.clip, s);
    frames[s] += c.frames;
    for (const k of c.classes) holds.get(s)!.add(k);
  };

  const clipsOf = new Map<number, ClipSummary[]>();
  for (const c of order) {
    for (const k of c.classes) {
      const list = clipsOf.get(k);
      if (list) list.push(c);
      else clipsOf.set(k, [c]);
    }
  }
  const rarestFirst = [...clipsOf.keys()].sort((a, b) => clipsOf.get(a)!.length - clipsOf.get(b)!.length || a - b);
  const tooFewClips: number[] = [];
  // The smallest splits first: they are the ones a rare class misses.
  const smallestFirst = [...used].sort((a, b) => plan.ratios[a] - plan.ratios[b]);
  for (const k of rarestFirst) {
    const candidates = clipsOf.get(k)!;
    if (candidates.length < used.length) {
      tooFewClips.push(k);
      continue;
    }
    for (const s of smallestFirst) {
      if (holds.get(s)!.has(k)) continue;
      let smallest: ClipSummary | undefined;
      for (const c of candidates) if (!assignment.has(c.clip) && (!smallest || c.frames < smallest.frames)) smallest = c;
      if (smallest) assign(smallest, s);
    }
  }
  for (const c of order) {
    if (assignment.has(c.clip)) continue;
    const s = used.reduce((best, x) => (target[x] - frames[x] > target[best] - frames[best] ? x : best), used[0]);
    assign(c, s);
  }
  return { assignment, tooFewClips: tooFewClips.sort((a, b) => a - b) };
}
