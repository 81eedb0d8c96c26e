import { LookoutError } from 'lookout/core';
import type { ModelFormat } from '../model/read-package.js';
import type { DetectorBackendRecord } from './backend-record.js';
import { onnxRecord } from './records/onnx.js';
import { simRecord } from './records/sim.js';
import { snpeRecord } from './records/snpe.js';

/**
 * The detector's back-ends, one record each, in the order the config lists them. Adding a back-end
 * is adding its record here; the names below and every enum built from them follow.
 */
export const DETECTOR_BACKENDS = [snpeRecord, onnxRecord, simRecord] as const;

type AnyRecord = (typeof DETECTOR_BACKENDS)[number];

/** RF_DETR_BACKEND's values. */
export type BackendName = AnyRecord['name'];
/** The back-ends that run a model file (package config.json's `backend`). */
export type ModelBackendName = Extract<AnyRecord, { capabilities: { modelFormats: readonly [ModelFormat, ...ModelFormat[]] } }>['name'];

const records: readonly DetectorBackendRecord[] = DETECTOR_BACKENDS;

export const BACKEND_NAMES: readonly BackendName[] = DETECTOR_BACKENDS.map((r) => r.name);

/** The back-ends whose capabilities include a model format: the runtimes a package may name. */
export const MODEL_BACKEND_NAMES = records.filter((r) => r.capabilities.modelFormats.length > 0).map((r) => r.name) as readonly ModelBackendName[];

// Every model format the package reader knows has a back-end that runs it.
type UnrunFormats = Exclude<ModelFormat, AnyRecord['capabilities']['modelFormats'][number]>;
const everyFormatRuns: [UnrunFormats] extends [never] ? true : UnrunFormats = true;
void everyFormatRuns;

export function isBackendName(value: string): value is BackendName {
  return (BACKEND_NAMES as readonly string[]).includes(value);
}

function unknownBackend(value: string | undefined): LookoutError {
  return new LookoutError('config_invalid', `RF_DETR_BACKEND must be one of ${BACKEND_NAMES.join(', ')} (got "${value ?? ''}")`);
}

/** The record of a back-end name; an unknown name is refused, naming the valid ones. */
export function backendRecord(name: string): DetectorBackendRecord {
  const record = records.find((r) => r.name === name);
  if (!record) throw unknownBackend(name);
  return record;
}

/** RF_DETR_BACKEND's value (case and spaces forgiven) as a back-end name. */
export function parseBackendName(value: string | undefined): BackendName {
  const name = (value ?? '').trim().toLowerCase();
  if (isBackendName(name)) return name;
  throw unknownBackend(value);
}

/** The back-end that runs a model format (the first record listing it), or null. */
export function backendForFormat(format: ModelFormat): DetectorBackendRecord | null {
  return records.find((r) => r.capabilities.modelFormats.includes(format)) ?? null;
}

/**
 * The back-end without RF_DETR_BACKEND: the one that runs the model file's format by its extension
 * (a bare .onnx), else the fleet default (a package or .dlc, the fleet load format), and the one
 * that needs no model when none is given (`--source sim` development).
 */
export function defaultBackendName(modelPath: string | null): BackendName {
  const pick = modelPath
    ? (records.find((r) => r.capabilities.modelFormats.some((f) => modelPath.endsWith(`.${f}`))) ?? records.find((r) => r.capabilities.fleetDefault))
    : records.find((r) => !r.capabilities.needsModel);
  if (!pick)
    throw new LookoutError('config_invalid', `no detector back-end fits ${modelPath ?? 'no model'}: set RF_DETR_BACKEND (${BACKEND_NAMES.join(', ')})`);
  return pick.name as BackendName;
}

/**
 * The back-ends that run on this machine, as advice for one that cannot (`RF_DETR_BACKEND=onnx with
 * an .onnx export, or RF_DETR_BACKEND=sim`).
 */
export function localAlternatives(): string {
  return records
    .filter((r) => r.capabilities.runsOn === 'this-machine')
    .map((r) => {
      const format = r.capabilities.modelFormats[0];
      return format ? `RF_DETR_BACKEND=${r.name} with ${article(format)} .${format} export` : `RF_DETR_BACKEND=${r.name}`;
    })
    .join(', or ');
}

/** How the config documents the default: `onnx or snpe from the model file, sim when no model is given`. */
export function describeDefaultChoice(): string {
  const byModel = records
    .filter((r) => r.capabilities.needsModel)
    .sort((a, b) => Number(a.capabilities.fleetDefault ?? false) - Number(b.capabilities.fleetDefault ?? false));
  const modelless = records.filter((r) => !r.capabilities.needsModel);
  return `${byModel.map((r) => r.name).join(' or ')} from the model file, ${modelless.map((r) => r.name).join(' or ')} when no model is given`;
}

/** `an` before a vowel (an .onnx model), else `a` (a .dlc model). */
export function article(word: string): 'a' | 'an' {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
