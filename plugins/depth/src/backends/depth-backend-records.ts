import { LookoutError } from 'lookout/core';
import type { DepthBackendRecord } from './depth-backend-record.js';
import { onnxDepthRecord } from './records/onnx.js';
import { simDepthRecord } from './records/sim.js';

/** The depth back-ends, one record each, in the order the config lists them. */
export const DEPTH_BACKENDS = [onnxDepthRecord, simDepthRecord] as const;

/** MONO_DEPTH_BACKEND's values. */
export type DepthBackendName = (typeof DEPTH_BACKENDS)[number]['name'];

const records: readonly DepthBackendRecord[] = DEPTH_BACKENDS;

export const DEPTH_BACKEND_NAMES: readonly DepthBackendName[] = DEPTH_BACKENDS.map((r) => r.name);

/** The record of a back-end name; an unknown name is refused, naming the valid ones. */
export function depthBackendRecord(name: string): DepthBackendRecord {
  const record = records.find((r) => r.name === name);
  if (!record) throw new LookoutError('config_invalid', `MONO_DEPTH_BACKEND must be one of ${DEPTH_BACKEND_NAMES.join(', ')} (got "${name}")`);
  return record;
}

/** The back-end for a model file that is there: the one that runs its format by extension, else the first that runs a model. */
export function depthBackendForModel(path: string): DepthBackendRecord | undefined {
  const runsModels = records.filter((r) => r.capabilities.needsModel);
  return runsModels.find((r) => r.capabilities.modelFormats.some((f) => path.endsWith(`.${f}`))) ?? runsModels[0];
}

/** The back-end that serves simulated frames without a model. */
export function depthBackendForSimulatedFrames(): DepthBackendRecord | undefined {
  return records.find((r) => r.capabilities.needsSimulatedFrames && !r.capabilities.needsModel);
}
