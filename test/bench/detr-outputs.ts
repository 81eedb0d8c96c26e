import { seededRandom } from '../support/onnx-model.js';

/**
 * RF-DETR-like outputs for the decode benches: Q = 300 queries over `classes`, logits mostly
 * strongly negative with a few confident pairs, eight sets to rotate per frame; and a remap that
 * keeps the first 23 classes.
 */
export function detrOutputSets(classes: number): { sets: { boxes: Float32Array; logits: Float32Array }[]; remap: Int32Array } {
  const rnd = seededRandom(classes);
  const sets = Array.from({ length: 8 }, () => ({
    boxes: Float32Array.from({ length: 300 * 4 }, (_, i) => (i % 4 < 2 ? rnd() : 0.02 + 0.3 * rnd())),
    logits: Float32Array.from({ length: 300 * classes }, () => (rnd() < 0.02 ? rnd() * 6 - 1 : -9 + rnd() * 7)),
  }));
  return { sets, remap: Int32Array.from({ length: classes }, (_, i) => (i < 23 ? i : -1)) };
}
