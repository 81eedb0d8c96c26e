import { LookoutError } from 'lookout/core';
import type { InferenceKit } from '../../../detector/src/service.js';
import type { DepthBackend } from './depth-backend.js';
import type { DepthOutputKind } from './onnx-depth-backend.js';

/** A depth model's file format (its extension, without the dot). */
export type DepthModelFormat = 'onnx';

export interface DepthBackendCapabilities {
  /** The model formats it runs; none for a back-end without a model. */
  readonly modelFormats: readonly DepthModelFormat[];
  /** It needs MONO_DEPTH_MODEL_PATH. */
  readonly needsModel: boolean;
  /** It needs the simulated frame source (frames with ground truth, LOOKOUT_SOURCE=sim). */
  readonly needsSimulatedFrames: boolean;
  /** Where it runs; depth back-ends all run in this process. */
  readonly runsOn: 'this-machine';
}

/** What a record's factory gets: the model path resolved under the data root (null when none is given). */
export interface DepthOpenOptions {
  modelPath: string | null;
  kit: InferenceKit;
  output?: DepthOutputKind;
  scale?: number;
  threads?: number;
}

/**
 * One depth back-end, all in one place: its MONO_DEPTH_BACKEND name, what it can run and needs, what
 * it reports and how it is opened. The name type, the config enum and the choice without
 * MONO_DEPTH_BACKEND are derived from the list in depth-backend-records.ts.
 */
export interface DepthBackendRecord<N extends string = string> {
  readonly name: N;
  readonly description: string;
  readonly capabilities: DepthBackendCapabilities;
  /** What the opened back-end reports (logs, health): its fields. */
  readonly statusFields: readonly string[];
  /** Opens the back-end; openDepthBackend has checked the model path and the frame source first. */
  open(options: DepthOpenOptions): Promise<DepthBackend>;
}

/** Declares a record, keeping its name as a literal type. */
export function defineDepthBackend<const N extends string>(record: DepthBackendRecord<N>): DepthBackendRecord<N> {
  return record;
}

/** The model path a back-end needs, or the config error that names the key to set. */
export function requireDepthModelPath(backend: string, modelPath: string | null | undefined): string {
  if (!modelPath)
    throw new LookoutError('config_invalid', `MONO_DEPTH_BACKEND=${backend} needs MONO_DEPTH_MODEL_PATH`, { details: { key: 'MONO_DEPTH_MODEL_PATH' } });
  return modelPath;
}
