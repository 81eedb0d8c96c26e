import type { GroundTruthObject } from '../../camera/src/service.js';
import type { DepthMap, Size } from './fusion.js';

/**
 * The sim back-end's depth map: what a perfect depth sensor would see of the scene's ground truth.
 * Objects are painted farthest first so nearer ones cover them, on a background plane at backgroundM.
 * Sampling this map goes through the same median-in-box path as a model's output, occlusions included.
 */
export function renderTruthDepthMap(truth: readonly GroundTruthObject[], size: Size, backgroundM = 50): DepthMap {
  const data = new Float32Array(size.width * size.height).fill(backgroundM);
  const order = [...truth].filter((g) => Number.isFinite(g.depthM) && g.depthM > 0).sort((a, b) => b.depthM - a.depthM);
  for (const g of order) {
    const x0 = Math.max(0, Math.round(g.box[0]));
    const x1 = Math.min(size.width, Math.round(g.box[2]));
    const y0 = Math.max(0, Math.round(g.box[1]));
    const y1 = Math.min(size.height, Math.round(g.box[3]));
    for (let y = y0; y < y1; y++) data.fill(g.depthM, y * size.width + x0, y * size.width + Math.max(x0, x1));
  }
  return { width: size.width, height: size.height, data };
}
