import { type Detection } from 'lookout/core/contracts';
import { checkDecodeInputs, DEFAULT_SCORE_THRESHOLD, DEFAULT_TOP_K, finiteBox, sigmoid, type DecodeOptions } from './decode-options.js';

/**
 * The plain twin of DetrDecoder, written as RF-DETR's post-processing reads: sigmoid every logit,
 * sort all Q*C scores, keep the top k, then threshold, convert boxes and remap classes. Ties order
 * by flat index so both twins agree exactly.
 */
export function decodeReference(boxes: ArrayLike<number>, logits: ArrayLike<number>, o: DecodeOptions): Detection[] {
  checkDecodeInputs(boxes, logits, o);
  const k = o.topK ?? DEFAULT_TOP_K;
  const threshold = o.scoreThreshold ?? DEFAULT_SCORE_THRESHOLD;
  const all: { index: number; score: number }[] = [];
  for (let i = 0; i < o.queries * o.classes; i++) {
    const score = sigmoid(logits[i]);
    // A NaN logit, or a query whose box is not finite (fp16 overflow), is no detection.
    if (!Number.isNaN(score) && finiteBox(boxes, Math.floor(i / o.classes) * 4)) all.push({ index: i, score });
  }
  all.sort((a, b) => b.score - a.score || a.index - b.index);

  const dets: Detection[] = [];
  for (const { index, score } of all.slice(0, k)) {
    if (!(score >= threshold)) continue;
    const q = Math.floor(index / o.classes);
    const modelClass = index % o.classes;
    const c = o.remap ? (modelClass < o.remap.length ? o.remap[modelClass] : -1) : modelClass;
    if (c < 0) continue;
    const cx = boxes[q * 4];
    const cy = boxes[q * 4 + 1];
    const w = boxes[q * 4 + 2];
    const h = boxes[q * 4 + 3];
    const clampX = (v: number) => Math.min(Math.max(v, 0), o.frameWidth);
    const clampY = (v: number) => Math.min(Math.max(v, 0), o.frameHeight);
    dets.push({
      c,
      p: score,
      b: [
        clampX((cx - 0.5 * w) * o.frameWidth),
        clampY((cy - 0.5 * h) * o.frameHeight),
        clampX((cx + 0.5 * w) * o.frameWidth),
        clampY((cy + 0.5 * h) * o.frameHeight),
      ],
    });
  }
  return dets;
}
