/** RF-DETR's post-processing keeps the 300 best (query, class) pairs. */
export const DEFAULT_TOP_K = 300;
/**
 * Below the person gate (0.35) so that the gate, not the decoder, decides person counts; other
 * classes are published from here up.
 */
export const DEFAULT_SCORE_THRESHOLD = 0.3;

export interface DecodeOptions {
  /** Q: number of queries (boxes tensor [1, Q, 4]). */
  queries: number;
  /** C: classes of the head (logits tensor [1, Q, C]). */
  classes: number;
  /** Size of the frame the boxes are reported in (the 640 substream). */
  frameWidth: number;
  frameHeight: number;
  topK?: number;
  scoreThreshold?: number;
  /** Model class index -> production id, -1 to drop; null keeps model ids (production heads). */
  remap?: Int32Array | null;
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** The four box values of one query, from `at`, are all finite. */
export function finiteBox(boxes: ArrayLike<number>, at: number): boolean {
  return Number.isFinite(boxes[at]) && Number.isFinite(boxes[at + 1]) && Number.isFinite(boxes[at + 2]) && Number.isFinite(boxes[at + 3]);
}

export function checkDecodeInputs(boxes: ArrayLike<number>, logits: ArrayLike<number>, o: DecodeOptions): void {
  if (!(Number.isInteger(o.queries) && o.queries > 0 && Number.isInteger(o.classes) && o.classes > 0)) {
    throw new RangeError(`decode needs positive integer queries and classes (got Q=${o.queries}, C=${o.classes})`);
  }
  if (boxes.length !== o.queries * 4) throw new RangeError(`boxes has ${boxes.length} values, expected Q*4 = ${o.queries * 4}`);
  if (logits.length !== o.queries * o.classes) {
    throw new RangeError(`logits has ${logits.length} values, expected Q*C = ${o.queries * o.classes}`);
  }
  const k = o.topK ?? DEFAULT_TOP_K;
  if (!(Number.isInteger(k) && k > 0)) throw new RangeError(`topK must be a positive integer (got ${k})`);
}
