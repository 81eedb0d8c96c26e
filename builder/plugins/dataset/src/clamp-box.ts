import type { SourceBox } from './formats/source-frame.js';

export interface NormalisedBox {
  cx: number;
  cy: number;
  w: number;
  h: number;
}

/**
 * A box clamped to the image (normalised 0..1 corners), and whether clamping changed it; null when
 * nothing of it is left inside (zero width or height), which the report counts as degenerate.
 */
export function clampBox(b: Pick<SourceBox, 'cx' | 'cy' | 'w' | 'h'>): { box: NormalisedBox | null; clamped: boolean } {
  const x1 = b.cx - b.w / 2;
  const y1 = b.cy - b.h / 2;
  const x2 = b.cx + b.w / 2;
  const y2 = b.cy + b.h / 2;
  const c = (v: number) => Math.min(1, Math.max(0, v));
  const [cx1, cy1, cx2, cy2] = [c(x1), c(y1), c(x2), c(y2)];
  const clamped = cx1 !== x1 || cy1 !== y1 || cx2 !== x2 || cy2 !== y2;
  if (cx2 - cx1 <= 0 || cy2 - cy1 <= 0) return { box: null, clamped };
  // A box inside the image stays exactly as the source wrote it (no rounding through its corners).
  if (!clamped) return { box: { cx: b.cx, cy: b.cy, w: b.w, h: b.h }, clamped };
  return { box: { cx: (cx1 + cx2) / 2, cy: (cy1 + cy2) / 2, w: cx2 - cx1, h: cy2 - cy1 }, clamped };
}

/** COCO's pixel `[x, y, w, h]` (top-left corner) as a normalised centre box. */
export function fromPixels(b: SourceBox, width: number, height: number): SourceBox {
  return { className: b.className, cx: (b.cx + b.w / 2) / width, cy: (b.cy + b.h / 2) / height, w: b.w / width, h: b.h / height };
}
