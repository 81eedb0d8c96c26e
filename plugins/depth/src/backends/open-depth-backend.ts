import { existsSync } from 'node:fs';
import { LookoutError, devicePath } from 'lookout/core';
import type { InferenceKit } from '../../../detector/src/service.js';
import type { DepthBackend, DepthBackendName } from './depth-backend.js';
import { OnnxDepthBackend, type DepthOutputKind } from './onnx-depth-backend.js';
import { SimDepthBackend } from './sim-depth-backend.js';

export interface OpenDepthOptions {
  backend?: DepthBackendName;
  /** Device path (MONO_DEPTH_MODEL_PATH, under /data/models on a device). */
  modelPath?: string;
  dataDir: string;
  /** True when the frames come from the simulator (they carry ground truth). */
  simSource: boolean;
  output?: DepthOutputKind;
  scale?: number;
  kit: InferenceKit;
}

/**
 * The back-end MONO_DEPTH_BACKEND names; without it, onnx when the model file is there, sim when the
 * frames are simulated (the layer env files name /data/models/mono_depth.onnx, which a development
 * data root rarely has), and otherwise a refusal naming the missing file: a real camera without its
 * depth model must not pretend to fuse depth.
 */
export async function openDepthBackend(o: OpenDepthOptions): Promise<{ backend: DepthBackend; note?: string }> {
  const path = o.modelPath ? devicePath(o.dataDir, o.modelPath) : undefined;
  const onnx = async () => {
    if (!path) throw new LookoutError('config_invalid', 'MONO_DEPTH_BACKEND=onnx needs MONO_DEPTH_MODEL_PATH', { details: { key: 'MONO_DEPTH_MODEL_PATH' } });
    return OnnxDepthBackend.open({ modelPath: path, kit: o.kit, ...(o.output ? { output: o.output } : {}), ...(o.scale !== undefined ? { scale: o.scale } : {}), threads: 1 });
  };
  if (o.backend === 'onnx') return { backend: await onnx() };
  if (o.backend === 'sim') {
    if (!o.simSource) throw new LookoutError('backend_unavailable', 'MONO_DEPTH_BACKEND=sim needs the simulated frame source (LOOKOUT_SOURCE=sim)');
    return { backend: new SimDepthBackend() };
  }
  if (path && existsSync(path)) return { backend: await onnx() };
  if (o.simSource) {
    return { backend: new SimDepthBackend(), note: path ? `no depth model at ${path}: depth from the simulated ground truth` : 'depth from the simulated ground truth' };
  }
  throw new LookoutError('backend_unavailable', `MONO_DEPTH_MODEL_PATH: no depth model at ${path ?? '(unset)'} and the frames are not simulated`, {
    details: { key: 'MONO_DEPTH_MODEL_PATH', path },
  });
}
