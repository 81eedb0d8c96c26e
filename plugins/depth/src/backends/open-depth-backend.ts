import { existsSync } from 'node:fs';
import { LookoutError, devicePath } from 'lookout/core';
import type { InferenceKit } from '../../../detector/src/service.js';
import type { DepthBackend, DepthBackendName } from './depth-backend.js';
import { requireDepthModelPath, type DepthBackendRecord } from './depth-backend-record.js';
import { depthBackendForModel, depthBackendForSimulatedFrames, depthBackendRecord } from './depth-backend-records.js';
import type { DepthOutputKind } from './onnx-depth-backend.js';

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
 * The back-end MONO_DEPTH_BACKEND names; without it, the one that runs the model file when it is
 * there, the one for simulated frames when the frames are simulated (the layer env files name
 * /data/models/mono_depth.onnx, which a development data root rarely has), and otherwise a refusal
 * naming the missing file: a real camera without its depth model must not pretend to fuse depth.
 * What a back-end needs (a model path, simulated frames) comes from its record and is checked here.
 */
export async function openDepthBackend(o: OpenDepthOptions): Promise<{ backend: DepthBackend; note?: string }> {
  const path = o.modelPath ? devicePath(o.dataDir, o.modelPath) : undefined;
  const open = (record: DepthBackendRecord): Promise<DepthBackend> => {
    const { needsModel, needsSimulatedFrames } = record.capabilities;
    if (needsModel) requireDepthModelPath(record.name, path);
    if (needsSimulatedFrames && !o.simSource) {
      throw new LookoutError('backend_unavailable', `MONO_DEPTH_BACKEND=${record.name} needs the simulated frame source (LOOKOUT_SOURCE=sim)`);
    }
    return record.open({
      modelPath: path ?? null,
      kit: o.kit,
      ...(o.output ? { output: o.output } : {}),
      ...(o.scale !== undefined ? { scale: o.scale } : {}),
      threads: 1,
    });
  };
  if (o.backend !== undefined) return { backend: await open(depthBackendRecord(o.backend)) };
  const forModel = path && existsSync(path) ? depthBackendForModel(path) : undefined;
  if (forModel) return { backend: await open(forModel) };
  const forSimulated = o.simSource ? depthBackendForSimulatedFrames() : undefined;
  if (forSimulated) {
    return {
      backend: await open(forSimulated),
      note: path ? `no depth model at ${path}: depth from the simulated ground truth` : 'depth from the simulated ground truth',
    };
  }
  throw new LookoutError('backend_unavailable', `MONO_DEPTH_MODEL_PATH: no depth model at ${path ?? '(unset)'} and the frames are not simulated`, {
    details: { key: 'MONO_DEPTH_MODEL_PATH', path },
  });
}
