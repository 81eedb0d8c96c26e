import type { Frame } from '../../../camera/src/service.js';
import type { PreprocessOptions } from './normalization.js';
import { Preprocessor } from './preprocess.js';
import type { InputShape } from './shape-check.js';

/**
 * Keeps one Preprocessor for the current frame size (the substream is fixed at 640x640, so tables
 * are built once) and rebuilds it only if the source size changes.
 */
export class InputBuilder {
  private pre: Preprocessor | null = null;

  constructor(
    readonly target: InputShape,
    private readonly options: PreprocessOptions = {},
  ) {}

  /** The model input for `frame`; the returned array is reused by the next call. */
  build(frame: Frame): Float32Array {
    const pre = this.pre;
    if (!pre || pre.sizes.srcWidth !== frame.width || pre.sizes.srcHeight !== frame.height) {
      this.pre = new Preprocessor({ srcWidth: frame.width, srcHeight: frame.height, dstWidth: this.target[3], dstHeight: this.target[2] }, this.options);
    }
    return this.pre!.run(frame.data);
  }
}
