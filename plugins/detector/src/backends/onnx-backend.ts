import * as ort from 'onnxruntime-node';
import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { Frame } from '../../../camera/src/service.js';
import { findDetrOutputs, type DetrOutputNames, type OutputShape } from '../model/detr-outputs.js';
import { checkModelHead, prepareModel, type PreparedModel } from '../model/prepare-model.js';
import type { ModelPackage } from '../model/read-package.js';
import { checkInputShapes, formatShape, resolveTargetShape } from '../model/shape-check.js';
import type { BackendStatus, DetectorBackend } from './backend.js';
import { createCpuSession } from './cpu-session.js';
import { DetrRunner } from './detr-runner.js';
import { onnxRecord } from './records/onnx.js';

export interface OnnxBackendOptions {
  /** Package tar or bare .onnx file. */
  modelPath: string;
  /** Preprocessing target H = W; defaults to the package's declared size, else the model's. */
  inputSize?: number;
  topK?: number;
  scoreThreshold?: number;
  /** onnxruntime intra-op threads (default: onnxruntime's choice). */
  threads?: number;
  /** Antialiased (torchvision-style) bilinear shrink; default true. */
  antialias?: boolean;
  /** The package at modelPath, when choosing the back-end already read it. */
  modelPackage?: ModelPackage | null;
}

/** What the loaded model looks like, for status tools and tests. */
export interface OnnxModelInfo {
  inputName: string;
  /** The model file's own input shape, from onnxruntime's session metadata. */
  modelInputShape: ReadonlyArray<number | string>;
  outputs: DetrOutputNames;
  /** Q and C when the model declares them (else learned from the first run). */
  queries: number | null;
  classes: number | null;
}

function dimsOf(meta: ort.InferenceSession.ValueMetadata): ReadonlyArray<number | string> {
  return meta.isTensor ? meta.shape : [];
}

/**
 * RF_DETR_BACKEND=onnx: CPU inference with onnxruntime-node on an RF-DETR ONNX export, with the real
 * preprocessing and output decoding. Loading fails closed (package, classes, shapes) before a single
 * frame runs.
 */
export class OnnxBackend implements DetectorBackend {
  readonly name = onnxRecord.name;

  private constructor(
    private readonly runner: DetrRunner,
    private readonly session: ort.InferenceSession,
    readonly info: OnnxModelInfo,
  ) {}

  static async create(options: OnnxBackendOptions): Promise<OnnxBackend> {
    const prepared = await prepareModel(options.modelPath, onnxRecord.name, options.modelPackage);
    const { pkg } = prepared;
    const bytes = await pkg.readModel();
    let session: ort.InferenceSession;
    try {
      session = await createCpuSession(bytes, options.threads);
    } catch (err) {
      throw new LookoutError('model_package_invalid', `${pkg.path}: onnxruntime cannot load ${pkg.modelName}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    try {
      const info = inspectSession(session, prepared);
      const target = resolveTargetShape(options.inputSize, prepared.declaredShape, info.modelInputShape);
      checkInputShapes({ declared: prepared.declaredShape, model: info.modelInputShape, target, modelName: pkg.modelName });
      const runner = new DetrRunner(onnxRecord.name, prepared, target, {
        topK: options.topK,
        scoreThreshold: options.scoreThreshold,
        preprocess: { antialias: options.antialias ?? true },
        headClasses: info.classes,
      });
      return new OnnxBackend(runner, session, info);
    } catch (err) {
      await session.release();
      throw err;
    }
  }

  status(): BackendStatus {
    return this.runner.status();
  }

  detect(frame: Frame): Promise<Detection[]> {
    return this.runner.detect(frame, async (data) => {
      // The onnx runner's layout is always float32 NCHW (DetrRunner's default).
      if (!(data instanceof Float32Array)) throw new LookoutError('message_invalid', 'the onnx back-end takes float32 NCHW input');
      const feed = { [this.info.inputName]: new ort.Tensor('float32', data, this.runner.target) };
      const out = await this.session.run(feed, [this.info.outputs.boxes, this.info.outputs.logits]);
      const boxes = out[this.info.outputs.boxes];
      const logits = out[this.info.outputs.logits];
      const { queries, classes } = this.checkOutputs(boxes, logits);
      return { boxes: boxes.data as Float32Array, logits: logits.data as Float32Array, queries, classes };
    });
  }

  close(): Promise<void> {
    return this.runner.close(() => this.session.release());
  }

  private checkOutputs(boxes: ort.Tensor, logits: ort.Tensor): { queries: number; classes: number } {
    const [bN, q, four] = boxes.dims;
    const [lN, lq, c] = logits.dims;
    const ok =
      boxes.type === 'float32' &&
      logits.type === 'float32' &&
      boxes.dims.length === 3 &&
      logits.dims.length === 3 &&
      bN === 1 &&
      lN === 1 &&
      four === 4 &&
      q === lq &&
      q > 0 &&
      c > 0;
    if (!ok) {
      throw new LookoutError(
        'model_package_invalid',
        `${this.runner.prepared.pkg.modelName}: outputs are boxes ${boxes.type}${formatShape(boxes.dims)} and logits ${logits.type}${formatShape(logits.dims)}, ` +
          'expected float32 [1,Q,4] and [1,Q,C]',
      );
    }
    return { queries: q, classes: c };
  }
}

function inspectSession(session: ort.InferenceSession, prepared: PreparedModel): OnnxModelInfo {
  const { pkg } = prepared;
  const where = `${pkg.path}: ${pkg.modelName}`;
  if (session.inputNames.length !== 1) {
    throw new LookoutError('model_package_invalid', `${where} has inputs ${session.inputNames.join(', ')}; an RF-DETR export has one, "input"`);
  }
  const inputMeta = session.inputMetadata[0];
  if (!inputMeta.isTensor || inputMeta.type !== 'float32') {
    throw new LookoutError('model_package_invalid', `${where}: input "${inputMeta.name}" is not a float32 tensor`);
  }
  const outputs: OutputShape[] = session.outputMetadata.map((m) => ({ name: m.name, dims: dimsOf(m) }));
  let names: DetrOutputNames;
  try {
    names = findDetrOutputs(outputs);
  } catch (err) {
    throw new LookoutError('model_package_invalid', `${where}: ${(err as Error).message}`, { cause: err });
  }
  const boxDims = outputs.find((o) => o.name === names.boxes)!.dims;
  const logitDims = outputs.find((o) => o.name === names.logits)!.dims;
  const queries = typeof boxDims[1] === 'number' ? boxDims[1] : null;
  const classes = typeof logitDims[2] === 'number' ? logitDims[2] : null;

  if (classes !== null) checkModelHead(prepared, classes);
  return { inputName: inputMeta.name, modelInputShape: [...inputMeta.shape], outputs: names, queries, classes };
}
