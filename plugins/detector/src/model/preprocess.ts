import { NchwResampleTwin, nativeAddon, type KernelImplementation, type NativeAddon, type NativeResampler } from 'lookout/native';
import { IMAGENET_MEAN, IMAGENET_STD, type PreprocessOptions, type SizePair } from './normalization.js';

export interface PreprocessorOptions extends PreprocessOptions {
  /** The addon to run on; default the process's (null, or LOOKOUT_NATIVE=0: the TypeScript twin). */
  addon?: NativeAddon | null;
}

/**
 * Packed BGR888 frame -> NCHW float32 RGB model input, resized (bilinear, antialiased when
 * shrinking by default), scaled to 0..1 and normalized. Runs once per detector frame on the native
 * addon when it loaded, else on its TypeScript twin (core's NchwResampleTwin); the two agree within
 * 1e-5. Tables and the output tensor are built once; per frame there is no allocation.
 */
export class Preprocessor {
  readonly sizes: SizePair;
  /** [1, 3, dstHeight, dstWidth], reused by every `run`. */
  readonly output: Float32Array;
  readonly implementation: KernelImplementation;
  private readonly antialias: boolean;
  private readonly scale: Float64Array;
  private readonly bias: Float64Array;
  private readonly native: NativeResampler | null;
  private readonly wholeFrame: Int32Array;
  private readonly twin: NchwResampleTwin | null;

  constructor(sizes: SizePair, options: PreprocessorOptions = {}) {
    const { srcWidth, srcHeight, dstWidth, dstHeight } = sizes;
    for (const [k, v] of Object.entries(sizes)) {
      if (!Number.isInteger(v) || v <= 0) throw new RangeError(`preprocess ${k} must be a positive integer (got ${v})`);
    }
    this.sizes = { ...sizes };
    this.antialias = options.antialias ?? true;
    const mean = options.mean ?? IMAGENET_MEAN;
    const std = options.std ?? IMAGENET_STD;
    // (v / 255 - mean) / std == v * scale + bias; bilinear weights sum to 1, so this can follow the resize.
    this.scale = Float64Array.from([0, 1, 2], (c) => 1 / (255 * std[c]));
    this.bias = Float64Array.from([0, 1, 2], (c) => -mean[c] / std[c]);
    this.output = new Float32Array(3 * dstHeight * dstWidth);
    const addon = options.addon === undefined ? nativeAddon() : options.addon;
    this.native = addon ? new addon.Resampler() : null;
    this.wholeFrame = Int32Array.of(0, 0, srcWidth, srcHeight);
    const frame = { x: 0, y: 0, width: srcWidth, height: srcHeight };
    this.twin = this.native ? null : new NchwResampleTwin(srcWidth, frame, dstWidth, dstHeight, this.antialias, this.scale, this.bias);
    this.implementation = this.native ? 'native' : 'typescript';
  }

  /** Writes the model input for `bgr` into `out` (default: this.output) and returns it. */
  run(bgr: Uint8Array, out: Float32Array = this.output): Float32Array {
    const { srcWidth, srcHeight, dstWidth, dstHeight } = this.sizes;
    if (bgr.length !== srcWidth * srcHeight * 3) {
      throw new RangeError(`frame has ${bgr.length} bytes, expected ${srcWidth}x${srcHeight}x3 = ${srcWidth * srcHeight * 3}`);
    }
    if (out.length !== 3 * dstWidth * dstHeight) throw new RangeError(`output tensor has ${out.length} values, expected ${3 * dstWidth * dstHeight}`);
    if (this.native) {
      this.native.nchw(bgr, srcWidth, srcHeight, this.wholeFrame, dstWidth, dstHeight, this.antialias, this.scale, this.bias, out);
    } else {
      this.twin!.run(bgr, out);
    }
    return out;
  }
}
