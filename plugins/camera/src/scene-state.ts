import type { CameraIntrinsics } from './service.js';
import { classIdOf, DEFAULT_COLOUR, DEFAULT_SIZE_M, type SceneLabel } from './scenario-classes.js';
import type { Keyframe, Scenario, SceneObject } from './scenario-schema.js';

/** A scenario object with its defaults filled in, ready to be posed at any time. */
export interface CompiledObject {
  id: number;
  label: SceneLabel;
  classId: number;
  /** Fill colour as [b, g, r] (the frame is BGR). */
  bgr: [number, number, number];
  sizeM: [number, number];
  trajectory?: Keyframe[];
  attachTo?: { index: number; dx: number; dy: number; dz: number };
  appearS: number;
  disappearS: number;
}

export interface CompiledScene {
  scenario: Scenario;
  /** Parents come before the objects attached to them. */
  objects: CompiledObject[];
}

/** Where an object is at one instant, in pixels, before clipping and occlusion. */
export interface ObjectPose {
  object: CompiledObject;
  cx: number;
  cy: number;
  depthM: number;
  /** Unclipped [x1, y1, x2, y2]. */
  box: [number, number, number, number];
}

export function hexToBgr(hex: string): [number, number, number] {
  const v = Number.parseInt(hex.slice(1), 16);
  return [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];
}

export function compileScene(scenario: Scenario): CompiledScene {
  const ordered: SceneObject[] = [...scenario.objects.filter((o) => !o.attachTo), ...scenario.objects.filter((o) => o.attachTo)];
  const indexOfId = new Map(ordered.map((o, i) => [o.id, i]));
  const objects = ordered.map((o): CompiledObject => {
    const compiled: CompiledObject = {
      id: o.id,
      label: o.class,
      classId: classIdOf(o.class),
      bgr: hexToBgr(o.colour ?? DEFAULT_COLOUR[o.class]),
      sizeM: o.sizeM ?? DEFAULT_SIZE_M[o.class],
      appearS: o.appearS ?? 0,
      disappearS: o.disappearS ?? Number.POSITIVE_INFINITY,
    };
    if (o.trajectory) compiled.trajectory = o.trajectory;
    if (o.attachTo) compiled.attachTo = { index: indexOfId.get(o.attachTo.id)!, dx: o.attachTo.dx, dy: o.attachTo.dy, dz: o.attachTo.dz };
    return compiled;
  });
  return { scenario, objects };
}

/** Linear between keyframes, held before the first and after the last. */
export function interpolate(track: readonly Keyframe[], tS: number): { x: number; y: number; z: number } {
  const first = track[0];
  if (tS <= first.t) return first;
  for (let i = 1; i < track.length; i++) {
    const b = track[i];
    if (tS <= b.t) {
      const a = track[i - 1];
      const u = (tS - a.t) / (b.t - a.t);
      return { x: a.x + (b.x - a.x) * u, y: a.y + (b.y - a.y) * u, z: a.z + (b.z - a.z) * u };
    }
  }
  return track[track.length - 1];
}

/** Poses of the objects present at `tS` (seconds into the scenario); absent objects are left out. */
export function posesAt(scene: CompiledScene, tS: number, k: CameraIntrinsics): ObjectPose[] {
  const byIndex = new Array<ObjectPose | undefined>(scene.objects.length);
  scene.objects.forEach((o, i) => {
    if (tS < o.appearS || tS >= o.disappearS) return;
    let cx: number, cy: number, z: number;
    if (o.attachTo) {
      const parent = byIndex[o.attachTo.index];
      if (!parent) return; // follows its parent out of the scene
      cx = parent.cx + (k.fx * o.attachTo.dx) / parent.depthM;
      cy = parent.cy + (k.fy * o.attachTo.dy) / parent.depthM;
      z = Math.max(0.1, parent.depthM + o.attachTo.dz);
    } else {
      ({ x: cx, y: cy, z } = interpolate(o.trajectory!, tS));
    }
    const w = (k.fx * o.sizeM[0]) / z;
    const h = (k.fy * o.sizeM[1]) / z;
    byIndex[i] = { object: o, cx, cy, depthM: z, box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2] };
  });
  return byIndex.filter((p): p is ObjectPose => p !== undefined);
}
