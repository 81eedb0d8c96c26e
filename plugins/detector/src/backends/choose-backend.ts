import { readModelPackage, type ModelPackage } from '../model/read-package.js';
import type { BackendName } from './backend.js';
import { defaultBackendName } from './backend-records.js';

export interface BackendChoice {
  name: BackendName;
  /** The package read to choose, handed on so that the back-end does not list it again. */
  modelPackage: ModelPackage | null;
}

/**
 * RF_DETR_BACKEND when it is set (the back-end then refuses a package whose config.json names
 * another). Without it, a package's config.json names its back-end (spec 02: `backend`), so an onnx
 * package runs on onnx rather than on the fleet default; a bare model goes by its extension, and no
 * model means the back-end that needs none.
 */
export async function chooseBackend(configured: BackendName | undefined, modelPath: string | null): Promise<BackendChoice> {
  if (configured) return { name: configured, modelPackage: null };
  if (!modelPath) return { name: defaultBackendName(null), modelPackage: null };
  const modelPackage = await readModelPackage(modelPath);
  return { name: modelPackage.config?.backend ?? defaultBackendName(modelPath), modelPackage };
}
