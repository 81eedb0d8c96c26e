import { type Detection } from 'lookout/core/contracts';
import { checkDecodeInputs, DEFAULT_SCORE_THRESHOLD, DEFAULT_TOP_K, finiteBox, sigmoid, type DecodeOptions } from './decode-options.js';

/** Slack for the logit-space prefilter; the exact score test follows, so this only has to be generous. */
const PREFILTER_SLACK = 1e-6;

/**
 * RF-DETR output decoding in TypeScript: the twin of the addon's DetrDecoder, used where the addon is
 * not loaded. Gives exactly decodeReference's result: only the order of work differs. Sigmoid is monotonic, so the threshold is tested on raw logits first and only the
 * survivors get a score; top-k over the survivors is a bounded heap instead of a sort of all Q*C.
 * Buffers are kept between frames.
 */
export class DetrDecoderTwin {
  private cand = new Int32Array(0);
  private scores = new Float64Array(0);
  private heap = new Int32Array(0);

  decode(boxes: ArrayLike<number>, logits: ArrayLike<number>, o: DecodeOptions): Detection[] {
    checkDecodeInputs(boxes, logits, o);
    const total = o.queries * o.classes;
    const k = o.topK ?? DEFAULT_TOP_K;
    const threshold = o.scoreThreshold ?? DEFAULT_SCORE_THRESHOLD;
    if (this.cand.length < total) {
      this.cand = new Int32Array(total);
      this.scores = new Float64Array(total);
    }
    if (this.heap.length < k) this.heap = new Int32Array(k);
    const cand = this.cand;
    const scores = this.scores;

    const prefilter = threshold > 0 && threshold < 1 ? Math.log(threshold / (1 - threshold)) - PREFILTER_SLACK : -Infinity;
    let n = 0;
    for (let i = 0; i < total; i++) {
      const x = logits[i];
      if (x >= prefilter) {
        const s = sigmoid(x);
        if (s >= threshold && finiteBox(boxes, ((i / o.classes) | 0) * 4)) {
          cand[n] = i;
          scores[n] = s;
          n++;
        }
      }
    }

    const order = n > k ? this.selectTop(n, k) : cand.subarray(0, n).map((_, j) => j);
    // order holds positions into cand/scores; best first, ties by flat index (as the reference sorts).
    const sorted = Array.from(order).sort((a, b) => scores[b] - scores[a] || cand[a] - cand[b]);

    const dets: Detection[] = [];
    const C = o.classes;
    const W = o.frameWidth;
    const H = o.frameHeight;
    const remap = o.remap ?? null;
    for (const j of sorted) {
      const index = cand[j];
      const q = (index / C) | 0;
      const modelClass = index - q * C;
      const c = remap ? (modelClass < remap.length ? remap[modelClass] : -1) : modelClass;
      if (c < 0) continue;
      const bi = q * 4;
      const cx = boxes[bi];
      const cy = boxes[bi + 1];
      const w = boxes[bi + 2];
      const h = boxes[bi + 3];
      dets.push({
        c,
        p: scores[j],
        b: [
          Math.min(Math.max((cx - 0.5 * w) * W, 0), W),
          Math.min(Math.max((cy - 0.5 * h) * H, 0), H),
          Math.min(Math.max((cx + 0.5 * w) * W, 0), W),
          Math.min(Math.max((cy + 0.5 * h) * H, 0), H),
        ],
      });
    }
    return dets;
  }

  /** Positions of the k best of n candidates via a min-heap whose root is the worst kept one. */
  private selectTop(n: number, k: number): Int32Array {
    const heap = this.heap;
    const scores = this.scores;
    const cand = this.cand;
    // "a is worse than b": lower score, or the same score and a later flat index.
    const worse = (a: number, b: number) => scores[a] < scores[b] || (scores[a] === scores[b] && cand[a] > cand[b]);
    const siftDown = (start: number) => {
      let i = start;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= k) return;
        const r = l + 1;
        const m = r < k && worse(heap[r], heap[l]) ? r : l;
        if (!worse(heap[m], heap[i])) return;
        const t = heap[i];
        heap[i] = heap[m]!;
        heap[m] = t;
        i = m;
      }
    };
    for (let j = 0; j < k; j++) heap[j] = j;
    for (let i = (k >> 1) - 1; i >= 0; i--) siftDown(i);
    for (let j = k; j < n; j++) {
      if (worse(heap[0], j)) {
        heap[0] = j;
        siftDown(0);
      }
    }
    return heap.subarray(0, k);
  }
}
