import { nativeAddon, type KernelImplementation, type NativeAddon, type NativeDetrDecoder } from 'lookout/native';
import type { Detection } from 'lookout/core/contracts';
import { checkDecodeInputs, DEFAULT_SCORE_THRESHOLD, DEFAULT_TOP_K, sigmoid, type DecodeOptions } from './decode-options.js';
import { DetrDecoderTwin } from './decode-twin.js';

/**
 * RF-DETR output decoding for the frame path: the native addon's decoder when it loaded, else the
 * TypeScript twin. Both give decodeReference's detections: the addon selects, converts and remaps,
 * and hands back each kept logit, whose sigmoid is taken here as the twin takes it. Buffers are kept
 * between frames.
 */
export class DetrDecoder {
  readonly implementation: KernelImplementation;
  private readonly native: NativeDetrDecoder | null;
  private readonly twin: DetrDecoderTwin | null;
  private out = new Float64Array(0);

  constructor(addon: NativeAddon | null = nativeAddon()) {
    this.native = addon ? new addon.DetrDecoder() : null;
    this.twin = this.native ? null : new DetrDecoderTwin();
    this.implementation = this.native ? 'native' : 'typescript';
  }

  decode(boxes: ArrayLike<number>, logits: ArrayLike<number>, o: DecodeOptions): Detection[] {
    if (!this.native || !(boxes instanceof Float32Array) || !(logits instanceof Float32Array))
      return (this.twin ?? new DetrDecoderTwin()).decode(boxes, logits, o);
    checkDecodeInputs(boxes, logits, o);
    const k = o.topK ?? DEFAULT_TOP_K;
    if (this.out.length < k * 6) this.out = new Float64Array(k * 6);
    const out = this.out;
    const n = this.native.decode(
      boxes,
      logits,
      o.queries,
      o.classes,
      k,
      o.scoreThreshold ?? DEFAULT_SCORE_THRESHOLD,
      o.frameWidth,
      o.frameHeight,
      o.remap ?? null,
      out,
    );
    const dets: Detection[] = new Array<Detection>(n);
    for (let i = 0, j = 0; i < n; i++, j += 6) dets[i] = { c: out[j], p: sigmoid(out[j + 1]), b: [out[j + 2], out[j + 3], out[j + 4], out[j + 5]] };
    return dets;
  }
}

/** One-shot convenience; the frame path keeps a DetrDecoder to reuse its buffers. */
export function decodeDetr(boxes: ArrayLike<number>, logits: ArrayLike<number>, o: DecodeOptions): Detection[] {
  return new DetrDecoder().decode(boxes, logits, o);
}
