import { z } from 'zod';
import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import { hashSeed, seededRandom } from 'lookout/lib/random';
import type { Frame } from '../../../camera/src/service.js';
import type { BackendStatus, DetectorBackend } from './backend.js';
import { simRecord } from './records/sim.js';
import { SIM_CLASS_MAPS, simClassMap, type SimClassMap } from './sim-class-map.js';

/**
 * How far the simulated detector strays from the ground truth. Defaults resemble a decent detector
 * on easy footage: a couple of pixels of jitter, confident on visible objects, unsure and often
 * blind on mostly hidden ones, and a rare low-confidence false alarm.
 */
export const SimBackendOptionsSchema = z.strictObject({
  seed: z.number().int().nonnegative().default(1),
  boxJitterPx: z.number().min(0).max(100).default(2).describe('standard deviation of each box coordinate, pixels'),
  defaultConfidence: z.number().min(0).max(1).default(0.82),
  confidenceByClass: z.record(z.string().regex(/^\d+$/), z.number().min(0).max(1)).default({}).describe('class id -> base confidence'),
  confidenceSpread: z.number().min(0).max(1).default(0.06).describe('standard deviation around the base'),
  missProbability: z.number().min(0).max(1).default(0.03).describe('chance to miss a fully visible object'),
  minVisibility: z.number().min(0).max(0.99).default(0.1).describe('below this visibility an object is never detected'),
  falsePositiveRate: z.number().min(0).max(20).default(0.02).describe('expected false detections per frame'),
  falsePositiveClasses: z.array(z.number().int().min(0)).min(1).default([0]),
  classMap: z.enum(SIM_CLASS_MAPS).default('production').describe('the weights simulated: production, or omni15 (plates and signs as 14 and 15)'),
});
export type SimBackendOptions = z.input<typeof SimBackendOptionsSchema>;
export type SimBackendSettings = z.output<typeof SimBackendOptionsSchema>;

export class SimDetectorBackend implements DetectorBackend {
  readonly name = simRecord.name;
  readonly settings: SimBackendSettings;
  private readonly classMap: SimClassMap;

  constructor(options: SimBackendOptions = {}) {
    const parsed = SimBackendOptionsSchema.safeParse(options);
    if (!parsed.success) {
      const list = parsed.error.issues.map((i) => `${i.path.join('.') || '(options)'}: ${i.message}`).join('; ');
      throw new LookoutError('config_invalid', `sim detector options are invalid: ${list}`, { details: parsed.error.issues });
    }
    this.settings = parsed.data;
    this.classMap = simClassMap(this.settings.classMap);
  }

  status(): BackendStatus {
    return {
      backend: this.name,
      modelPath: null,
      packageVersion: null,
      ontologyHash: null,
      trainJobId: null,
      classMap: this.classMap.name,
      classes: [...this.classMap.classes],
      inputShape: [1, 3, 640, 640],
    };
  }

  /** Miss chance grows from missProbability at full view to certainty at minVisibility. */
  missChance(visibility: number): number {
    const { missProbability: base, minVisibility: floor } = this.settings;
    if (visibility <= 0 || visibility < floor) return 1;
    const hidden = (1 - visibility) / (1 - floor);
    return base + (1 - base) * hidden * hidden;
  }

  async detect(frame: Frame): Promise<Detection[]> {
    return this.detectSync(frame);
  }

  /**
   * Noise is seeded by (seed, frame.index), so the same frame always gives the same detections. Every
   * object draws the same number of random values whatever happens to it, so changing one setting
   * does not reshuffle the noise of unrelated objects.
   */
  detectSync(frame: Frame): Detection[] {
    if (!frame.truth) {
      throw new LookoutError('backend_unavailable', `the ${this.name} detector back-end needs frames with ground truth (LOOKOUT_SOURCE=sim)`);
    }
    const s = this.settings;
    const rnd = seededRandom(hashSeed(s.seed, frame.index));
    const W = frame.width;
    const H = frame.height;
    const out: Detection[] = [];
    for (const obj of [...frame.truth].sort((a, b) => a.id - b.id)) {
      const c = this.classMap.idOf(obj);
      const missDraw = rnd.next();
      const conf = rnd.gaussian(s.confidenceByClass[String(c)] ?? s.defaultConfidence, s.confidenceSpread);
      const j = [rnd.gaussian(0, s.boxJitterPx), rnd.gaussian(0, s.boxJitterPx), rnd.gaussian(0, s.boxJitterPx), rnd.gaussian(0, s.boxJitterPx)];
      if (c < 0) continue; // the simulated weights have no class for it (plates and signs on production)
      if (missDraw < this.missChance(obj.visibility)) continue;
      const box = clipBox([obj.box[0] + j[0], obj.box[1] + j[1], obj.box[2] + j[2], obj.box[3] + j[3]], W, H);
      if (!box) continue;
      // Partly hidden objects score lower, which is what makes a tracker's low-score stage matter.
      const p = clampP(conf * (0.55 + 0.45 * obj.visibility));
      out.push({ c, p, b: box });
    }
    let falseCount = poisson(() => rnd.next(), s.falsePositiveRate);
    while (falseCount-- > 0) {
      const c = s.falsePositiveClasses[Math.floor(rnd.next() * s.falsePositiveClasses.length)];
      const w = rnd.range(12, 60);
      const h = w * rnd.range(1, 3);
      const x = rnd.range(0, W - w);
      const y = rnd.range(0, H - h);
      const box = clipBox([x, y, x + w, y + h], W, H);
      const p = clampP(rnd.range(0.15, 0.5));
      if (box) out.push({ c, p, b: box });
    }
    return out;
  }

  async close(): Promise<void> {}
}

function clipBox(b: number[], W: number, H: number): number[] | undefined {
  const x1 = Math.max(0, Math.min(W, Math.min(b[0], b[2])));
  const x2 = Math.max(0, Math.min(W, Math.max(b[0], b[2])));
  const y1 = Math.max(0, Math.min(H, Math.min(b[1], b[3])));
  const y2 = Math.max(0, Math.min(H, Math.max(b[1], b[3])));
  if (x2 - x1 < 1 || y2 - y1 < 1) return undefined;
  return [r2(x1), r2(y1), r2(x2), r2(y2)];
}

function clampP(p: number): number {
  return Math.round(Math.min(0.99, Math.max(0.01, p)) * 1000) / 1000;
}

function r2(v: number): number {
  return Math.round(v * 100) / 100;
}

/** Knuth's method; rates here are small, so the loop is short. */
function poisson(next: () => number, rate: number): number {
  if (rate <= 0) return 0;
  const limit = Math.exp(-rate);
  let k = 0;
  let prod = next();
  while (prod > limit) {
    k++;
    prod *= next();
  }
  return k;
}
