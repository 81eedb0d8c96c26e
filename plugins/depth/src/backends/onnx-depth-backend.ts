import { readFile } from 'node:fs/promises';
import * as ort from 'onnxruntime-node';
import { LookoutError } from 'lookout/core';
import { SerialQueue } from 'lookout/lib/limits';
import type { Frame } from '../../../camera/src/service.js';
import type { FramePreprocessor, InferenceKit } from '../../../detector/src/service.js';
import type { DepthMap } from '../fusion.js';
import type { DepthBackend } from './depth-backend.js';
import { onnxDepthRecord } from './records/onnx.js';

/** How the model's output reads: metres, or inverse depth (most monocular models) as scale / value. */
export type DepthOutputKind = 'metric' | 'inverse';

export interface OnnxDepthOptions {
  modelPath: string;
  output?: DepthOutputKind;
  /** Metres per output unit (metric) or the numerator of scale / value (inverse). */
  scale?: number;
  threads?: number;
  /** The detector's ONNX session and frame preprocessing. */
  kit: InferenceKit;
}

/**
 * MONO_DEPTH_BACKEND=onnx: a monocular depth model on CPU with onnxruntime-node. The model takes
 * [1, 3, H, W] RGB normalized with the ImageNet statistics (as MiDaS and Depth Anything exports do)
 * and gives one depth plane, [1, 1, h, w], [1, h, w] or [h, w].
 */
export class OnnxDepthBackend implements DepthBackend {
  readonly name = onnxDepthRecord.name;
  private preprocessor: FramePreprocessor | undefined;
  private readonly queue = new SerialQueue();
  private closed = false;

  private constructor(
    private readonly session: ort.InferenceSession,
    readonly source: string,
    readonly inputName: string,
    readonly outputName: string,
    /** [H, W] of the model input. */
    readonly inputSize: [number, number],
    private readonly output: DepthOutputKind,
    private readonly scale: number,
    private readonly kit: InferenceKit,
  ) {}

  static async open(options: OnnxDepthOptions): Promise<OnnxDepthBackend> {
    const { modelPath } = options;
    const scale = options.scale ?? 1;
    if (!(Number.isFinite(scale) && scale > 0)) throw new LookoutError('config_invalid', `MONO_DEPTH_SCALE must be a positive number, got ${scale}`);
    let bytes: Uint8Array;
    try {
      bytes = await readFile(modelPath);
    } catch (err) {
      throw new LookoutError('backend_unavailable', `MONO_DEPTH_MODEL_PATH: cannot read the depth model ${modelPath}: ${(err as Error).message}`, {
        cause: err,
        details: { key: 'MONO_DEPTH_MODEL_PATH', path: modelPath },
      });
    }
    let session: ort.InferenceSession;
    try {
      session = await options.kit.createCpuSession(bytes, options.threads);
    } catch (err) {
      throw new LookoutError('model_package_invalid', `${modelPath}: onnxruntime cannot load the depth model: ${(err as Error).message}`, { cause: err });
    }
    const input = session.inputMetadata[0];
    const out = session.outputMetadata[0];
    const dims = input?.isTensor ? input.shape : [];
    const [n, c, h, w] = dims;
    if (
      !input ||
      !out ||
      dims.length !== 4 ||
      (n !== 1 && typeof n !== 'string') ||
      c !== 3 ||
      typeof h !== 'number' ||
      typeof w !== 'number' ||
      h < 1 ||
      w < 1
    ) {
      await session.release();
      throw new LookoutError('model_shape_mismatch', `${modelPath}: a depth model needs one fixed input [1, 3, H, W], it declares [${dims.join(', ')}]`, {
        details: { path: modelPath, inputShape: dims },
      });
    }
    return new OnnxDepthBackend(session, modelPath, input.name, out.name, [h, w], options.output ?? 'metric', scale, options.kit);
  }

  estimate(frame: Frame): Promise<DepthMap> {
    if (this.closed) return Promise.reject(new LookoutError('backend_unavailable', `the ${this.name} depth back-end (${this.source}) is closed`));
    // onnxruntime sessions are not for concurrent runs on one input buffer: one frame at a time.
    return this.queue.run(() => this.run(frame));
  }

  private async run(frame: Frame): Promise<DepthMap> {
    const [h, w] = this.inputSize;
    if (!this.preprocessor || this.preprocessor.sizes.srcWidth !== frame.width || this.preprocessor.sizes.srcHeight !== frame.height) {
      this.preprocessor = this.kit.createPreprocessor({ srcWidth: frame.width, srcHeight: frame.height, dstWidth: w, dstHeight: h });
    }
    let tensorIn: Float32Array;
    try {
      tensorIn = this.preprocessor.run(frame.data);
    } catch (err) {
      throw new LookoutError('argument_invalid', `depth: frame ${frame.index} cannot be preprocessed: ${(err as Error).message}`, { cause: err });
    }
    const results = await this.session.run({ [this.inputName]: new ort.Tensor('float32', tensorIn, [1, 3, h, w]) });
    const t = results[this.outputName];
    const od = t.dims;
    const plane = od.slice(-2);
    if (t.type !== 'float32' || od.length < 2 || od.slice(0, -2).some((d) => d !== 1)) {
      throw new LookoutError('model_shape_mismatch', `${this.source}: depth output is ${t.type}[${od.join(', ')}], expected float32 [1, 1, h, w]`);
    }
    const raw = t.data as Float32Array;
    const data = new Float32Array(raw.length);
    const s = this.scale;
    // A non-positive inverse depth is "infinitely far or unknown": a hole, which fusion skips.
    if (this.output === 'metric') for (let i = 0; i < raw.length; i++) data[i] = raw[i] * s;
    else for (let i = 0; i < raw.length; i++) data[i] = raw[i] > 0 ? s / raw[i] : NaN;
    return { width: plane[1], height: plane[0], data };
  }

  /** Refuses new frames, waits for the one in flight, then releases the session (once). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.idle();
    await this.session.release();
  }
}
