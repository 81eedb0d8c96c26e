import { BgrResizer } from 'lookout/native';
import type { Frame } from '../../../camera/src/service.js';
import type { PreprocessOptions } from './normalization.js';
import { Preprocessor } from './preprocess.js';
import type { InputShape } from './shape-check.js';

/** What a model takes: normalized float32 NCHW RGB, or the production bake's BGR888 bytes, NHWC. */
export type InputLayout = 'nchw_float32' | 'nhwc_bgr_uint8';
export type ModelInput = Float32Array | Uint8Array;

/**
 * Keeps one preprocessor for the current frame size (the substream is fixed at 640x640, so tables
 * are built once) and rebuilds it only if the source size changes. The target is [1, 3, H, W]
 * either way; for nhwc_bgr_uint8 the frame is resized to H x W BGR888 (at 640x640 it is the frame).
 */
export class InputBuilder {
  private pre: { sizes: { srcWidth: number; srcHeight: number }; run(bgr: Uint8Array): ModelInput } | null = null;

  constructor(
    readonly target: InputShape,
    private readonly options: PreprocessOptions = {},
    readonly layout: InputLayout = 'nchw_float32',
  ) {}

  /** The model input for `frame`; the returned array is reused by the next call. */
  build(frame: Frame): ModelInput {
    const pre = this.pre;
    if (!pre || pre.sizes.srcWidth !== frame.width || pre.sizes.srcHeight !== frame.height) {
      const sizes = { srcWidth: frame.width, srcHeight: frame.height, dstWidth: this.target[3], dstHeight: this.target[2] };
      this.pre = this.layout === 'nhwc_bgr_uint8' ? new BgrResizer(sizes, this.options.antialias ?? true) : new Preprocessor(sizes, this.options);
    }
    return this.pre!.run(frame.data);
  }
}
