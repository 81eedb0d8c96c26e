import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import { SerialQueue } from 'lookout/lib/limits';
import type { Frame } from '../../../camera/src/service.js';
import { DetrDecoder } from '../model/decode.js';
import { checkFrame } from '../model/frame-check.js';
import { InputBuilder, type InputLayout, type ModelInput } from '../model/input-builder.js';
import type { PreprocessOptions } from '../model/normalization.js';
import { checkModelHead, type PreparedModel } from '../model/prepare-model.js';
import { publishedClasses } from '../model/published-classes.js';
import type { InputShape } from '../model/shape-check.js';
import type { BackendName, BackendStatus } from './backend.js';

/** One inference's raw outputs: boxes [Q*4] (cx, cy, w, h, 0..1) and logits [Q*C]. */
export interface DetrOutputs {
  boxes: Float32Array;
  logits: Float32Array;
  queries: number;
  classes: number;
}

export interface DetrRunnerOptions {
  topK?: number;
  scoreThreshold?: number;
  preprocess?: PreprocessOptions;
  /** The model head's class count when the runtime reports it at load (onnx); else learned from the first inference. */
  headClasses?: number | null;
  /** What the model takes: normalized float32 NCHW (default), or BGR888 bytes NHWC (the production bake's DLC). */
  inputLayout?: InputLayout;
}

/**
 * What the model back-ends (onnx, snpe) share around their runtime once the package is prepared:
 * frames one at a time (the input buffer is reused), the real preprocessing and decoding with the
 * package's class remap, the status from the package, and a close that lets the frame in flight end
 * before the runtime is released. The back-end supplies only the inference itself.
 */
export class DetrRunner {
  private readonly input: InputBuilder;
  private readonly decoder = new DetrDecoder();
  private readonly queue = new SerialQueue();
  private closed = false;
  private headClasses: number | null;

  constructor(
    private readonly backend: BackendName,
    readonly prepared: PreparedModel,
    readonly target: InputShape,
    private readonly options: DetrRunnerOptions,
  ) {
    this.input = new InputBuilder(target, options.preprocess, options.inputLayout);
    this.headClasses = options.headClasses ?? null;
  }

  status(): BackendStatus {
    const { pkg, classMap } = this.prepared;
    return {
      backend: this.backend,
      modelPath: pkg.path,
      packageVersion: pkg.labels?.version ?? null,
      ontologyHash: pkg.labels?.ontology_hash ?? null,
      trainJobId: pkg.labels?.train_job_id ?? null,
      classMap: classMap.name,
      classes: publishedClasses(classMap, this.headClasses),
      inputShape: [...this.target],
    };
  }

  /** Preprocesses `frame`, runs `infer` on the model input and decodes its outputs in frame pixels. */
  detect(frame: Frame, infer: (input: ModelInput) => Promise<DetrOutputs>): Promise<Detection[]> {
    return this.queue.run(async () => {
      if (this.closed) throw new LookoutError('backend_unavailable', `the ${this.backend} back-end is closed`);
      checkFrame(frame);
      const out = await infer(this.input.build(frame));
      this.checkOutputs(out);
      checkModelHead(this.prepared, out.classes);
      this.headClasses = out.classes;
      return this.decoder.decode(out.boxes, out.logits, {
        queries: out.queries,
        classes: out.classes,
        frameWidth: frame.width,
        frameHeight: frame.height,
        topK: this.options.topK,
        scoreThreshold: this.options.scoreThreshold,
        remap: this.prepared.classMap.remap,
      });
    });
  }

  /** The runtime's outputs must agree with their own Q and C before decoding reads them. */
  private checkOutputs(out: DetrOutputs): void {
    const { queries: q, classes: c } = out;
    const sized = Number.isInteger(q) && q > 0 && Number.isInteger(c) && c > 0;
    if (!sized || out.boxes.length !== q * 4 || out.logits.length !== q * c) {
      const { pkg } = this.prepared;
      throw new LookoutError(
        'model_package_invalid',
        `${pkg.path}: ${pkg.modelName}: outputs hold ${out.boxes.length} box and ${out.logits.length} logit values, ` +
          `expected Q*4 = ${q * 4} and Q*C = ${q * c} (Q = ${q}, C = ${c})`,
      );
    }
  }

  /** Refuses new frames, waits for the one in flight, then releases the runtime (once). */
  async close(release: () => void | Promise<void>): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue.idle();
    await release();
  }
}
