import { type Detection } from 'lookout/core/contracts';
import type { Frame } from '../../../camera/src/service.js';
import type { PublishedClass } from '../model/published-classes.js';
import type { BackendName } from './backend-records.js';

/** The names come from the back-end records (backend-records.ts). */
export type { BackendName } from './backend-records.js';

export interface BackendStatus {
  backend: BackendName;
  modelPath: string | null;
  packageVersion: string | null;
  ontologyHash: string | null;
  trainJobId: string | null;
  classMap: 'production' | 'omni15' | 'custom';
  /** The classes it publishes, in the ids `dets` carry (after the package's remap), with their names. */
  classes: PublishedClass[];
  /** [1, 3, H, W] the model takes. */
  inputShape: [number, number, number, number];
}

/**
 * One inference back-end (RF_DETR_BACKEND). `detect` returns detections in production class ids with
 * boxes in pixels of the frame given; gating (person p >= 0.35) happens in the pipeline, not here.
 */
export interface DetectorBackend {
  readonly name: BackendName;
  status(): BackendStatus;
  detect(frame: Frame): Promise<Detection[]>;
  close(): Promise<void>;
}
