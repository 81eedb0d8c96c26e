import { LookoutError } from 'lookout/core';
import type { ModelFormat, ModelPackage } from '../model/read-package.js';
import type { BackendStatus, DetectorBackend } from './backend.js';
import type { SimBackendOptions } from './sim-backend.js';
import type { SnpeBinding } from './snpe-backend.js';

/** Where a back-end runs: in this process on this machine, or on the DSP through the native addon. */
export type BackendHost = 'this-machine' | 'dsp-addon';

export interface BackendCapabilities<F extends readonly ModelFormat[] = readonly ModelFormat[]> {
  /** The model formats (file extension, without the dot) it runs; none for a back-end without a model. */
  readonly modelFormats: F;
  /** It needs RF_DETR_MODEL_PATH (or RF_DETR_EDGE4_MODEL). */
  readonly needsModel: boolean;
  readonly runsOn: BackendHost;
  /**
   * Without RF_DETR_BACKEND, the back-end for a model path no back-end claims by its extension (a
   * package .tar: the fleet load format). One record at most.
   */
  readonly fleetDefault?: boolean;
}

export interface CreateBackendOptions {
  /** Model package or file; default from env (RF_DETR_MODEL_PATH, else RF_DETR_EDGE4_MODEL). */
  modelPath?: string | null;
  /** The package at modelPath when it was read to choose the back-end (a ~100 MB tar is then listed once). */
  modelPackage?: ModelPackage | null;
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

/** What a record's factory gets: the options with the model path resolved (null when none is given) and the env. */
export interface BackendOpenOptions extends Omit<CreateBackendOptions, 'modelPath' | 'env'> {
  modelPath: string | null;
  env: Record<string, string | undefined>;
}

/**
 * One detector back-end, all in one place: its RF_DETR_BACKEND name, what it can run, the status
 * fields it fills and how it is opened. Everything else (the name type, the config and status enums,
 * the package config's runtimes, the default choice by model file, the factory dispatch) is derived
 * from the list of records in backend-records.ts.
 */
export interface DetectorBackendRecord<N extends string = string, F extends readonly ModelFormat[] = readonly ModelFormat[]> {
  readonly name: N;
  readonly description: string;
  readonly capabilities: BackendCapabilities<F>;
  /** The fields of BackendStatus it fills (the others are null, or empty). */
  readonly statusFields: readonly (keyof BackendStatus)[];
  /** Opens the back-end. A back-end that needs a model is given one (createBackend checks first). */
  open(options: BackendOpenOptions): Promise<DetectorBackend>;
}

/** Declares a record, keeping its name and model formats as literal types. */
export function defineDetectorBackend<const N extends string, const F extends readonly ModelFormat[]>(
  record: DetectorBackendRecord<N, F>,
): DetectorBackendRecord<N, F> {
  return record;
}

/** Every status field: what a back-end running a model package reports. */
export const MODEL_STATUS_FIELDS: readonly (keyof BackendStatus)[] = [
  'backend',
  'modelPath',
  'packageVersion',
  'ontologyHash',
  'trainJobId',
  'classMap',
  'classes',
  'inputShape',
];

/** The model path a back-end needs, or the config error that names the keys to set. */
export function requireModelPath(backend: string, modelPath: string | null | undefined): string {
  if (!modelPath) {
    throw new LookoutError('config_invalid', `RF_DETR_BACKEND=${backend} needs a model: set RF_DETR_MODEL_PATH or RF_DETR_EDGE4_MODEL`);
  }
  return modelPath;
}
