import type { Detection } from 'lookout/core/contracts';
import { seededRandom, type Random } from 'lookout/lib/random';
import type { GroundTruthObject } from '../../../camera/src/service.js';

/**
 * Small synthetic sequences with exact ground truth, built from straight-line trajectories. They let
 * the tracker's tests and the bench run without the renderer; the simulated camera's scenarios are
 * used on top of them where present.
 */

export interface SyntheticObject {
  id: number;
  classId: number;
  /** Box width and height in pixels. */
  size: [number, number];
  /** Centre at frame 0 and velocity in pixels per frame. */
  start: [number, number];
  velocity: [number, number];
  /** Depth in metres; the nearer object hides the farther one where they overlap. */
  depthM: number;
  /** Frames [from, to) the object is in the scene (default: all). */
  frames?: [number, number];
  /** Frames [from, to) the object is fully hidden (behind a pillar: no detection at all). */
  hidden?: [number, number];
}

export interface SyntheticScene {
  name: string;
  frameCount: number;
  objects: SyntheticObject[];
}

export interface TruthFrame {
  index: number;
  truth: GroundTruthObject[];
}

const LABELS: Record<number, string> = { 0: 'person', 2: 'car' };

/** Ground truth per frame, with visibility from occlusion by nearer objects (sampled on a grid). */
export function renderTruth(scene: SyntheticScene): TruthFrame[] {
  const out: TruthFrame[] = [];
  for (let f = 0; f < scene.frameCount; f++) {
    const present = scene.objects.filter((o) => !o.frames || (f >= o.frames[0] && f < o.frames[1]));
    const boxes = present.map((o) => boxAt(o, f));
    const truth = present.map((o, i): GroundTruthObject => {
      const hidden = o.hidden !== undefined && f >= o.hidden[0] && f < o.hidden[1];
      const occluders = present.map((p, j) => (p.depthM < o.depthM ? boxes[j] : null)).filter((b) => b !== null);
      return {
        id: o.id,
        classId: o.classId,
        label: LABELS[o.classId] ?? `class-${o.classId}`,
        box: boxes[i],
        depthM: o.depthM,
        visibility: hidden ? 0 : visibleFraction(boxes[i], occluders),
      };
    });
    out.push({ index: f, truth });
  }
  return out;
}

function boxAt(o: SyntheticObject, f: number): [number, number, number, number] {
  const cx = o.start[0] + o.velocity[0] * f;
  const cy = o.start[1] + o.velocity[1] * f;
  return [cx - o.size[0] / 2, cy - o.size[1] / 2, cx + o.size[0] / 2, cy + o.size[1] / 2];
}

function visibleFraction(box: readonly number[], occluders: ReadonlyArray<readonly number[]>): number {
  if (occluders.length === 0) return 1;
  const n = 10;
  let visible = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const x = box[0] + ((i + 0.5) / n) * (box[2] - box[0]);
      const y = box[1] + ((j + 0.5) / n) * (box[3] - box[1]);
      if (!occluders.some((b) => x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3])) visible += 1;
    }
  }
  return visible / (n * n);
}

export interface DetectionNoise {
  /** Box corner jitter, standard deviation as a fraction of the box size. */
  boxSd: number;
  /** Chance that a visible object is missed. */
  missRate: number;
  /** False positives per frame (expected count). */
  falsePositiveRate: number;
  /** Objects less visible than this are never detected; up to lowVisibility they come out weak. */
  minVisibility: number;
  lowVisibility: number;
}

export const DEFAULT_DETECTION_NOISE: DetectionNoise = {
  boxSd: 0.03,
  missRate: 0.05,
  falsePositiveRate: 0.1,
  minVisibility: 0.25,
  lowVisibility: 0.6,
};

/** Detections a decent detector would give for this truth: jittered, sometimes missed, weak when occluded. */
export function detectFromTruth(truth: readonly GroundTruthObject[], rnd: Random, noise: DetectionNoise = DEFAULT_DETECTION_NOISE): Detection[] {
  const dets: Detection[] = [];
  for (const g of truth) {
    if (g.classId < 0 || g.visibility < noise.minVisibility || rnd.chance(noise.missRate)) continue;
    const w = g.box[2] - g.box[0];
    const h = g.box[3] - g.box[1];
    const b = [
      g.box[0] + rnd.gaussian(0, noise.boxSd * w),
      g.box[1] + rnd.gaussian(0, noise.boxSd * h),
      g.box[2] + rnd.gaussian(0, noise.boxSd * w),
      g.box[3] + rnd.gaussian(0, noise.boxSd * h),
    ];
    const p = g.visibility < noise.lowVisibility ? rnd.range(0.15, 0.45) : rnd.range(0.6, 0.95);
    dets.push({ c: g.classId, p: round3(p), b });
  }
  let fps = noise.falsePositiveRate;
  while (fps > 0 && rnd.chance(Math.min(fps, 1))) {
    fps -= 1;
    const x = rnd.range(0, 600);
    const y = rnd.range(200, 600);
    dets.push({ c: 0, p: round3(rnd.range(0.3, 0.7)), b: [x, y, x + rnd.range(15, 40), y + rnd.range(40, 90)] });
  }
  return dets;
}

const round3 = (v: number): number => Math.round(v * 1000) / 1000;

/** Detections for every frame of a scene, deterministic for a seed. */
export function detectScene(frames: readonly TruthFrame[], seed: number, noise: DetectionNoise = DEFAULT_DETECTION_NOISE): Detection[][] {
  const rnd = seededRandom(seed);
  return frames.map((f) => detectFromTruth(f.truth, rnd, noise));
}

/** Two people walking towards each other on one line; the nearer one hides the other as they pass. */
export function peopleCrossingScene(frameCount = 80): SyntheticScene {
  return {
    name: 'synthetic-people-crossing',
    frameCount,
    objects: [
      { id: 1, classId: 0, size: [50, 140], start: [100, 400], velocity: [5, 0], depthM: 6 },
      { id: 2, classId: 0, size: [46, 130], start: [540, 405], velocity: [-5, 0], depthM: 7 },
    ],
  };
}

/** One person walks behind a pillar: five frames with no detection at all. */
export function pillarOcclusionScene(frameCount = 60, hidden: [number, number] = [25, 30]): SyntheticScene {
  return {
    name: 'synthetic-pillar-occlusion',
    frameCount,
    objects: [
      { id: 1, classId: 0, size: [48, 136], start: [120, 380], velocity: [6, 0.5], depthM: 6, hidden },
      { id: 2, classId: 0, size: [40, 110], start: [480, 330], velocity: [-2, 0], depthM: 9 },
    ],
  };
}

/** A person and a car passing each other: class-aware matching must keep their ids apart. */
export function personAndCarScene(frameCount = 60): SyntheticScene {
  return {
    name: 'synthetic-person-car',
    frameCount,
    objects: [
      { id: 1, classId: 0, size: [50, 140], start: [150, 420], velocity: [4, 0], depthM: 6 },
      { id: 2, classId: 2, size: [180, 90], start: [500, 440], velocity: [-4, 0], depthM: 9 },
    ],
  };
}

/** A crowd: people on straight paths across the frame at several depths, crossing and occluding. */
export function crowdScene(count = 10, frameCount = 120, seed = 7): SyntheticScene {
  const rnd = seededRandom(seed);
  const objects: SyntheticObject[] = [];
  for (let i = 0; i < count; i++) {
    const depthM = rnd.range(4, 14);
    const h = 900 / depthM;
    const leftToRight = i % 2 === 0;
    const speed = rnd.range(2, 6);
    objects.push({
      id: i + 1,
      classId: 0,
      size: [h * 0.33, h],
      start: [leftToRight ? rnd.range(20, 200) : rnd.range(440, 620), 260 + 1500 / depthM + rnd.range(-10, 10)],
      velocity: [leftToRight ? speed : -speed, rnd.range(-0.6, 0.6)],
      depthM,
      frames: [Math.floor(rnd.range(0, 20)), frameCount],
    });
  }
  return { name: 'synthetic-crowd', frameCount, objects };
}
