import { nativeAddon, type KernelImplementation } from './native-addon.js';
import type { NativeAddon, NativeResampler } from './native-kernels.js';
import { NchwResampleTwin } from './nchw-resample-twin.js';
import type { BgrImage, PixelRect } from './pixel-rect.js';

/** [x1, y1, x2, y2] in frame pixels, as detections carry them. */
export type CropBox = readonly [number, number, number, number];

/** The text cascade's input side (spec 02: pixel_values [1, 3, 384, 384]). */
export const TEXT_CROP_SIZE = 384;

export interface CropResizerOptions {
  /** Output side (default 384). */
  size?: number;
  /** Widen the filter when a crop is shrunk (default true). */
  antialias?: boolean;
  /** The addon to run on; default the process's (null, or LOOKOUT_NATIVE=0: the TypeScript twin). */
  addon?: NativeAddon | null;
}

export interface Crops {
  /** [n, 3, size, size] RGB planes in 0..1, one block per box, in the boxes' order. */
  tensor: Float32Array;
  /** The frame pixels each box took. */
  rects: PixelRect[];
}

const UNIT = Float64Array.of(1 / 255, 1 / 255, 1 / 255);
const ZERO = new Float64Array(3);

/**
 * Crops boxes out of a packed BGR888 frame and resizes each to size x size RGB float 0..1 (BGR
 * turned to RGB), several per frame: the text cascade's crops. A box takes the whole pixels it
 * touches, clipped to the frame (at least one pixel), so a crop never reads outside the frame.
 */
export class CropResizer {
  readonly size: number;
  readonly implementation: KernelImplementation;
  private readonly antialias: boolean;
  private readonly native: NativeResampler | null;

  constructor(options: CropResizerOptions = {}) {
    this.size = options.size ?? TEXT_CROP_SIZE;
    if (!Number.isInteger(this.size) || this.size <= 0) throw new RangeError(`crop size must be a positive integer (got ${this.size})`);
    this.antialias = options.antialias ?? true;
    const addon = options.addon === undefined ? nativeAddon() : options.addon;
    this.native = addon ? new addon.Resampler() : null;
    this.implementation = this.native ? 'native' : 'typescript';
  }

  /** The pixel rectangle a box takes in a width x height frame. */
  static rectOf(box: CropBox, width: number, height: number): PixelRect {
    if (!box.every(Number.isFinite)) throw new RangeError(`crop box [${box.join(', ')}] is not finite`);
    const left = Math.min(Math.max(Math.floor(box[0]), 0), width - 1);
    const top = Math.min(Math.max(Math.floor(box[1]), 0), height - 1);
    const right = Math.max(Math.min(Math.ceil(box[2]), width), left + 1);
    const bottom = Math.max(Math.min(Math.ceil(box[3]), height), top + 1);
    return { x: left, y: top, width: right - left, height: bottom - top };
  }

  /** The crops of `boxes`; `out` (n * 3 * size * size floats) is written when given, else allocated. */
  run(frame: BgrImage, boxes: readonly CropBox[], out?: Float32Array): Crops {
    const { width, height, data } = frame;
    if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0) || data.length !== width * height * 3) {
      throw new RangeError(`frame has ${data.length} bytes, expected ${width}x${height}x3 = ${width * height * 3}`);
    }
    const per = 3 * this.size * this.size;
    const tensor = out ?? new Float32Array(boxes.length * per);
    if (tensor.length !== boxes.length * per) throw new RangeError(`crop tensor has ${tensor.length} values, expected ${boxes.length} x ${per}`);
    const rects = boxes.map((b) => CropResizer.rectOf(b, width, height));
    if (rects.length === 0) return { tensor, rects };
    if (this.native) {
      const packed = new Int32Array(rects.length * 4);
      rects.forEach((r, i) => packed.set([r.x, r.y, r.width, r.height], i * 4));
      this.native.nchw(data, width, height, packed, this.size, this.size, this.antialias, UNIT, ZERO, tensor);
    } else {
      rects.forEach((r, i) => {
        new NchwResampleTwin(width, r, this.size, this.size, this.antialias, UNIT, ZERO).run(data, tensor, i * per);
      });
    }
    return { tensor, rects };
  }
}
