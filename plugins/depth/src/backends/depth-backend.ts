import type { Frame } from '../../../camera/src/service.js';
import type { DepthMap } from '../fusion.js';
import type { DepthBackendName } from './depth-backend-records.js';

/** The names come from the back-end records (depth-backend-records.ts). */
export type { DepthBackendName } from './depth-backend-records.js';

/** One monocular depth estimator (MONO_DEPTH_BACKEND): a frame in, metres along the optical axis out. */
export interface DepthBackend {
  readonly name: DepthBackendName;
  /** Where the depth comes from, for logs and status (model path or `ground truth`). */
  readonly source: string;
  estimate(frame: Frame): Promise<DepthMap>;
  close(): Promise<void>;
}
