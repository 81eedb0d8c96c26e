import { hashSeed } from 'lookout/lib/random';
import type { CameraIntrinsics, GroundTruthObject } from './service.js';
import type { Scenario } from './scenario-schema.js';
import { buildBackground, buildNoiseTable } from './background.js';
import { compileScene, posesAt, type CompiledScene } from './scene-state.js';
import { SHAPES, silhouetteSpans } from './shapes.js';

export const SIM_WIDTH = 640;
export const SIM_HEIGHT = 640;
export const SIM_INTRINSICS: CameraIntrinsics = Object.freeze({ fx: 500, fy: 500, cx: 320, cy: 320 });

export interface RenderedScene {
  /** Packed BGR888, width*height*3 bytes. */
  data: Uint8Array;
  /** Objects present and at least partly inside the frame, by id. */
  truth: GroundTruthObject[];
}

export interface RendererOptions {
  width?: number;
  height?: number;
  intrinsics?: CameraIntrinsics;
}

const NOISE_SLACK = 8192;

/**
 * Draws a scene at an instant: painter's order far to near, so nearer objects really cover farther
 * ones, and an id buffer records which object owns each pixel. Visibility is what is left of each
 * silhouette in the id buffer over the silhouette's whole area (off-frame parts count as hidden).
 * Drawing is by row runs (memcpy of a colour row, typed-array fill of the id buffer).
 */
export class SceneRenderer {
  readonly width: number;
  readonly height: number;
  readonly intrinsics: CameraIntrinsics;
  readonly scene: CompiledScene;
  private readonly background: Uint8Array;
  private readonly noise: Int8Array | undefined;
  private readonly owner: Uint16Array;
  private readonly colourRows: Uint8Array[];

  constructor(scenario: Scenario | CompiledScene, options: RendererOptions = {}) {
    this.scene = 'objects' in scenario && 'scenario' in scenario ? scenario : compileScene(scenario);
    this.width = options.width ?? SIM_WIDTH;
    this.height = options.height ?? SIM_HEIGHT;
    this.intrinsics = options.intrinsics ?? SIM_INTRINSICS;
    const s = this.scene.scenario;
    this.background = buildBackground(this.width, this.height, s.background, s.seed);
    const pixels = this.width * this.height * 3;
    this.noise = s.background.sensorNoise > 0 ? buildNoiseTable(pixels + NOISE_SLACK, s.background.sensorNoise, s.seed) : undefined;
    this.owner = new Uint16Array(this.width * this.height);
    this.colourRows = this.scene.objects.map((o) => {
      const row = new Uint8Array(this.width * 3);
      for (let x = 0; x < row.length; x += 3) row.set(o.bgr, x);
      return row;
    });
  }

  /** The frame at `tS` seconds into the scenario (no looping here: the source wraps time). */
  render(tS: number): RenderedScene {
    const { width: W, height: H } = this;
    const poses = posesAt(this.scene, tS, this.intrinsics);
    // Far first; ties by id so equal depths draw the same way every time.
    poses.sort((a, b) => b.depthM - a.depthM || a.object.id - b.object.id);
    const data = this.background.slice();
    const owner = this.owner;
    owner.fill(0);
    const drawn = poses.map((pose, i) => {
      const spans = silhouetteSpans(SHAPES[pose.object.label], pose.box);
      const row = this.colourRows[this.scene.objects.indexOf(pose.object)];
      const tag = i + 1;
      const d = spans.data;
      for (let s = 0; s < spans.count; s++) {
        const y = d[s * 3];
        if (y < 0 || y >= H) continue;
        const x0 = Math.max(0, d[s * 3 + 1]);
        const x1 = Math.min(W, d[s * 3 + 2]);
        if (x1 <= x0) continue;
        const p = y * W;
        data.set(row.subarray(0, (x1 - x0) * 3), (p + x0) * 3);
        owner.fill(tag, p + x0, p + x1);
      }
      return spans;
    });
    if (this.noise) this.addGrain(data, tS);
    const truth: GroundTruthObject[] = [];
    poses.forEach((pose, i) => {
      const [bx1, by1, bx2, by2] = pose.box;
      const box: [number, number, number, number] = [clip(bx1, W), clip(by1, H), clip(bx2, W), clip(by2, H)];
      if (box[2] - box[0] <= 0 || box[3] - box[1] <= 0) return;
      const spans = drawn[i];
      const d = spans.data;
      const tag = i + 1;
      let visible = 0;
      for (let s = 0; s < spans.count; s++) {
        const y = d[s * 3];
        if (y < 0 || y >= H) continue;
        const p = y * W;
        const x1 = Math.min(W, d[s * 3 + 2]);
        for (let x = Math.max(0, d[s * 3 + 1]); x < x1; x++) if (owner[p + x] === tag) visible++;
      }
      truth.push({
        id: pose.object.id,
        classId: pose.object.classId,
        label: pose.object.label,
        box: [round2(box[0]), round2(box[1]), round2(box[2]), round2(box[3])],
        depthM: Math.round(pose.depthM * 1000) / 1000,
        visibility: spans.area > 0 ? Math.round((visible / spans.area) * 1000) / 1000 : 0,
      });
    });
    truth.sort((a, b) => a.id - b.id);
    return { data, truth };
  }

  /** Sensor grain: the same instant always gets the same grain, different instants differ. */
  private addGrain(data: Uint8Array, tS: number): void {
    const noise = this.noise!;
    const off = hashSeed(this.scene.scenario.seed, Math.round(tS * 1000)) % NOISE_SLACK;
    const view = new Uint8ClampedArray(data.buffer, data.byteOffset, data.length);
    for (let i = 0; i < view.length; i++) view[i] = view[i] + noise[i + off];
  }
}

function clip(v: number, max: number): number {
  return v < 0 ? 0 : v > max ? max : v;
}

function round2(v: number): number {
  return Math.round(v * 100) / 100;
}
