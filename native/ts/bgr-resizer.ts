import { BgrResampleTwin } from './bgr-resample-twin.js';
import { nativeAddon, type KernelImplementation } from './native-addon.js';
import type { NativeAddon, NativeResampler } from './native-kernels.js';

export interface BgrResizerSizes {
  srcWidth: number;
  srcHeight: number;
  dstWidth: number;
  dstHeight: number;
}

/**
 * Packed BGR888 frames to packed BGR888 (NHWC uint8) of a model's input size: the production bake's
 * 640x640 BGR888 DLC input. The addon when loaded, else its TypeScript twin; the two agree to the
 * bit. The output buffer is reused by the next call.
 */
export class BgrResizer {
  readonly output: Uint8Array;
  readonly implementation: KernelImplementation;
  private readonly native: NativeResampler | null;
  private readonly twin: BgrResampleTwin | null;

  constructor(
    readonly sizes: BgrResizerSizes,
    private readonly antialias = true,
    addon: NativeAddon | null = nativeAddon(),
  ) {
    for (const [k, v] of Object.entries(sizes)) {
      if (!Number.isInteger(v) || v <= 0) throw new RangeError(`resize ${k} must be a positive integer (got ${v})`);
    }
    this.output = new Uint8Array(sizes.dstWidth * sizes.dstHeight * 3);
    this.native = addon ? new addon.Resampler() : null;
    this.twin = this.native ? null : new BgrResampleTwin(sizes.srcWidth, sizes.srcHeight, sizes.dstWidth, sizes.dstHeight, antialias);
    this.implementation = this.native ? 'native' : 'typescript';
  }

  run(bgr: Uint8Array, out: Uint8Array = this.output): Uint8Array {
    const { srcWidth, srcHeight, dstWidth, dstHeight } = this.sizes;
    if (bgr.length !== srcWidth * srcHeight * 3) throw new RangeError(`frame has ${bgr.length} bytes, expected ${srcWidth}x${srcHeight}x3`);
    if (out.length !== dstWidth * dstHeight * 3) throw new RangeError(`output has ${out.length} bytes, expected ${dstWidth}x${dstHeight}x3`);
    if (this.native) this.native.bgrU8(bgr, srcWidth, srcHeight, dstWidth, dstHeight, this.antialias, out);
    else this.twin!.run(bgr, out);
    return out;
  }
}
