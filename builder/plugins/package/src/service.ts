import { serviceToken } from 'lookout/core';

/**
 * Builder stage 5a, packages: the tar the detector loads (`rf_detr_edge4.tar`: the DLC or ONNX,
 * config.json with backend and backend_properties, labels.json), tagged with version, ontology hash
 * and train job id. Every package is kept.
 */
export interface PackageRecord {
  id: string;
  /** v1, v2…, or the version the request named; unique. */
  version: string;
  file_name: 'rf_detr_edge4.tar';
  path: string;
  sha256: string;
  bytes: number;
  model_file: string;
  backend: 'snpe' | 'onnx';
  input_shape: (number | string)[];
  ontology: string;
  ontology_hash: string;
  labels_version: string;
  train_job_id: string | null;
  compile_job_id: string | null;
  created_at: string;
}

export interface PackageService {
  get(idOrVersion: string): PackageRecord | undefined;
  list(): PackageRecord[];
}

export const PACKAGES = serviceToken<PackageService>('builder.packages');
