import { LookoutError } from 'lookout/core';
import { modelPathFromEnv } from '../model/read-package.js';
import type { BackendName, DetectorBackend } from './backend.js';
import { OnnxBackend } from './onnx-backend.js';
import { SimDetectorBackend, type SimBackendOptions } from './sim-backend.js';
import { SnpeBackend, type SnpeBinding } from './snpe-backend.js';

export const BACKEND_NAMES: readonly BackendName[] = ['snpe', 'onnx', 'sim'];

export interface CreateBackendOptions {
  /** Model package or file; default from env (RF_DETR_MODEL_PATH, else RF_DETR_EDGE4_MODEL). */
  modelPath?: string | null;
  env?: Record<string, string | undefined>;
  /** Preprocessing target H = W (544 custom compile, 640 production, 672 Omni recipes). */
  inputSize?: number;
  topK?: number;
  scoreThreshold?: number;
  /** onnx: onnxruntime intra-op threads. */
  threads?: number;
  /** snpe: native addon path, or a DSP test double. */
  snpe?: { addonPath?: string; binding?: SnpeBinding };
  sim?: SimBackendOptions;
}

/** RF_DETR_BACKEND's value as a back-end name. */
export function parseBackendName(value: string | undefined): BackendName {
  const name = (value ?? '').trim().toLowerCase();
  if ((BACKEND_NAMES as readonly string[]).includes(name)) return name as BackendName;
  throw new LookoutError('config_invalid', `RF_DETR_BACKEND must be one of ${BACKEND_NAMES.join(', ')} (got "${value ?? ''}")`);
}

export async function createBackend(name: BackendName, options: CreateBackendOptions = {}): Promise<DetectorBackend> {
  const env = options.env ?? process.env;
  if (name === 'sim') return new SimDetectorBackend(options.sim);
  const modelPath = options.modelPath ?? modelPathFromEnv(env);
  if (!modelPath) {
    throw new LookoutError('config_invalid', `RF_DETR_BACKEND=${name} needs a model: set RF_DETR_MODEL_PATH or RF_DETR_EDGE4_MODEL`);
  }
  const common = { modelPath, inputSize: options.inputSize, topK: options.topK, scoreThreshold: options.scoreThreshold };
  switch (name) {
    case 'onnx':
      return OnnxBackend.create({ ...common, threads: options.threads });
    case 'snpe':
      return SnpeBackend.create({ ...common, env, addonPath: options.snpe?.addonPath, binding: options.snpe?.binding });
    default:
      throw new LookoutError('config_invalid', `unknown detector back-end ${String(name)}`);
  }
}
