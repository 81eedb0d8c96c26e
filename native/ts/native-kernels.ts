/**
 * What the native addon (native/, node-addon-api) exports: the frame hot paths, each the twin of a
 * TypeScript implementation the plugins run when the addon is absent. Arguments are flat typed
 * arrays; the TypeScript fronts validate them first and give the twins' errors.
 */
export interface NativeAddon {
  readonly abiVersion: number;
  /** Built with -fsanitize=address,undefined (the sanitizer test's build). */
  readonly sanitized: boolean;
  readonly Resampler: new () => NativeResampler;
  readonly DetrDecoder: new () => NativeDetrDecoder;
  /** Row-major |a| x |b| IoU of [x1, y1, x2, y2] boxes; with class ids, pairs of different classes are 0. */
  iouMatrix(a: Float64Array, b: Float64Array, classA: Int32Array | null, classB: Int32Array | null, out: Float64Array): void;
  /** Pictures and keyframes of a whole Annex B stream; codec 0 is H.265, 1 is H.264. */
  countPictures(stream: Uint8Array, codec: 0 | 1, maxNalBytes: number): { frames: number; keyframes: number };
  /** The resampling tables, for the tests that hold them equal to the twin's. */
  resizeTaps(inSize: number, outSize: number, antialias: boolean): { taps: number; start: Int32Array; weights: Float32Array; quantized: Int32Array };
  /** Present only when built against the vendor SNPE SDK (SNPE_ROOT): the detector's snpe back-end. */
  readonly snpe?: unknown;
}

export interface NativeResampler {
  /**
   * Rectangles ([x, y, width, height] each) of a packed BGR888 frame to float32 NCHW RGB planes,
   * value * scale[c] + bias[c], one [3, dstHeight, dstWidth] block per rectangle in `out`.
   */
  nchw(
    bgr: Uint8Array,
    width: number,
    height: number,
    rects: Int32Array,
    dstWidth: number,
    dstHeight: number,
    antialias: boolean,
    scale: Float64Array,
    bias: Float64Array,
    out: Float32Array,
  ): void;
  /** The whole frame to packed BGR888 of another size (fixed point, rounded half up). */
  bgrU8(bgr: Uint8Array, width: number, height: number, dstWidth: number, dstHeight: number, antialias: boolean, out: Uint8Array): void;
}

export interface NativeDetrDecoder {
  /** Writes (class, logit, x1, y1, x2, y2) per detection into `out`, best first; returns how many. */
  decode(
    boxes: Float32Array,
    logits: Float32Array,
    queries: number,
    classes: number,
    topK: number,
    scoreThreshold: number,
    frameWidth: number,
    frameHeight: number,
    remap: Int32Array | null,
    out: Float64Array,
  ): number;
}
