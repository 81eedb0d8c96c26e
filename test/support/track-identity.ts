import type { Detection } from '../../core/src/contracts/detection.js';
import type { GroundTruthObject } from '../../plugins/camera/src/service.js';
import { iou } from '../../plugins/tracker/src/geometry/box.js';

/**
 * Truth id -> every track id its detections carried, frame by frame: a tracked detection belongs to
 * the eligible truth object it overlaps most, at IoU >= 0.5. `eligible` says which objects a
 * detection may be matched to (e.g. only visible ones, so that a hidden object whose box overlaps a
 * visible one better does not take its detections). One id per object means identity was kept.
 */
export function trackIdsPerObject(
  truthPerFrame: readonly (readonly GroundTruthObject[])[],
  outputs: readonly Detection[][],
  eligible: (truth: GroundTruthObject, detection: Detection) => boolean,
): Map<number, Set<number>> {
  const map = new Map<number, Set<number>>();
  outputs.forEach((dets, f) => {
    for (const d of dets) {
      if (d.track_id === undefined) continue;
      let best = 0.5;
      let who: number | undefined;
      for (const g of truthPerFrame[f]) {
        if (!eligible(g, d)) continue;
        const o = iou(g.box, [d.b[0], d.b[1], d.b[2], d.b[3]]);
        if (o >= best) [best, who] = [o, g.id];
      }
      if (who === undefined) continue;
      if (!map.has(who)) map.set(who, new Set());
      map.get(who)!.add(d.track_id);
    }
  });
  return map;
}
