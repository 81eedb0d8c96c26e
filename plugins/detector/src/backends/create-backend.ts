import { modelPathFromEnv } from '../model/read-package.js';
import type { BackendName, DetectorBackend } from './backend.js';
import { requireModelPath, type CreateBackendOptions } from './backend-record.js';
import { backendRecord } from './backend-records.js';

export { BACKEND_NAMES, parseBackendName } from './backend-records.js';
export type { CreateBackendOptions } from './backend-record.js';

/**
 * Opens the back-end `name` through its record. A back-end that needs a model gets the one given, else
 * the env's (RF_DETR_MODEL_PATH, else RF_DETR_EDGE4_MODEL), and is refused without one; an unknown
 * name is refused naming the valid ones.
 */
export async function createBackend(name: BackendName, options: CreateBackendOptions = {}): Promise<DetectorBackend> {
  const record = backendRecord(name);
  const env = options.env ?? process.env;
  const modelPath = record.capabilities.needsModel ? requireModelPath(record.name, options.modelPath ?? modelPathFromEnv(env)) : (options.modelPath ?? null);
  return record.open({ ...options, modelPath, env });
}
