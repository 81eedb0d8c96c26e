import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, posix } from 'node:path';
import type { z } from 'zod';
import { LookoutError } from 'lookout/core';
import { fileSource } from './byte-source.js';
import { describeIssues, PackageConfigSchema, PackageLabelsSchema, type PackageConfig, type PackageLabels } from './package-schema.js';
import { readTar, type TarEntry } from './tar-reader.js';

export type ModelFormat = 'onnx' | 'dlc';

export interface ModelPackage {
  kind: 'tar' | 'bare';
  /** The path given (package tar or bare model file). */
  path: string;
  /** Model file name (inside the tar, or the bare file's name). */
  modelName: string;
  modelFormat: ModelFormat;
  modelSize: number;
  /** config.json of a tar package; null for a bare model. */
  config: PackageConfig | null;
  /**
   * labels.json (in the tar beside config.json, or beside a bare model); null when there is none. It
   * is optional: spec 02 ships a package as the .dlc and config.json, which run on the production map.
   */
  labels: PackageLabels | null;
  /** The model file's bytes (read on demand: a package model is about 100 MB). */
  readModel(): Promise<Uint8Array>;
}

export const LABELS_FILE = 'labels.json';
export const CONFIG_FILE = 'config.json';
/**
 * config.json and labels.json are a few kilobytes (a class list, a remap, a hash); one of 500 MB was
 * read whole (1.6 GB at its peak) and the detector then missed its start timeout with no word why.
 */
export const METADATA_MAX_BYTES = 4 * 1024 * 1024;

function tooLarge(path: string, what: string, size: number): LookoutError {
  return invalid(path, `${what} is ${size} bytes; a package's metadata files are at most ${METADATA_MAX_BYTES} bytes`);
}

function invalid(path: string, message: string, cause?: unknown): LookoutError {
  return new LookoutError('model_package_invalid', `${path}: ${message}`, { cause });
}

function modelFormatOf(name: string): ModelFormat | null {
  const ext = extname(name).toLowerCase();
  return ext === '.onnx' ? 'onnx' : ext === '.dlc' ? 'dlc' : null;
}

function parseJson<T>(path: string, what: string, bytes: Uint8Array, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw invalid(path, `${what} is not valid JSON (${(err as Error).message})`, err);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalid(path, `${what} is invalid: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * The environment's model path (spec 02 keys): RF_DETR_MODEL_PATH, else RF_DETR_EDGE4_MODEL (the
 * custom edge4 package), as the detector config documents them.
 */
export function modelPathFromEnv(env: Record<string, string | undefined>): string | null {
  const path = env.RF_DETR_MODEL_PATH?.trim();
  if (path) return path;
  const edge4 = env.RF_DETR_EDGE4_MODEL?.trim();
  return edge4 ? edge4 : null;
}

/** Reads a package tar (rf_detr_edge4.tar: config.json, the model and an optional labels.json) or a bare .onnx/.dlc model with an optional labels.json beside it. */
export async function readModelPackage(path: string): Promise<ModelPackage> {
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw invalid(path, 'not a regular file');
    size = info.size;
  } catch (err) {
    if (err instanceof LookoutError) throw err;
    throw invalid(path, `cannot open the model package (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, err);
  }
  const format = modelFormatOf(path);
  if (format) return readBareModel(path, format, size);
  return readTarPackage(path);
}

async function readBareModel(path: string, format: ModelFormat, size: number): Promise<ModelPackage> {
  if (size === 0) throw invalid(path, 'the model file is empty');
  const labelsPath = join(dirname(path), LABELS_FILE);
  let labels: PackageLabels | null = null;
  let labelsBytes: Uint8Array | null = null;
  try {
    const { size: labelsSize } = await stat(labelsPath);
    if (labelsSize > METADATA_MAX_BYTES) throw tooLarge(labelsPath, LABELS_FILE, labelsSize);
    labelsBytes = await readFile(labelsPath);
  } catch (err) {
    if (err instanceof LookoutError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw invalid(labelsPath, 'cannot read labels.json', err);
  }
  if (labelsBytes) labels = parseJson(labelsPath, LABELS_FILE, labelsBytes, PackageLabelsSchema);
  return {
    kind: 'bare',
    path,
    modelName: basename(path),
    modelFormat: format,
    modelSize: size,
    config: null,
    labels,
    readModel: async () => new Uint8Array(await readFile(path)),
  };
}

/** config.json may sit at the root or under one top folder; the shallowest one is the package's. */
function findConfig(path: string, entries: TarEntry[]): TarEntry {
  const configs = entries.filter((e) => e.type === 'file' && posix.basename(e.name) === CONFIG_FILE);
  if (configs.length === 0) throw invalid(path, `the package holds no ${CONFIG_FILE}`);
  const depth = (e: TarEntry) => e.name.split('/').length;
  const minDepth = Math.min(...configs.map(depth));
  const top = configs.filter((e) => depth(e) === minDepth);
  if (top.length > 1) throw invalid(path, `the package holds several ${CONFIG_FILE} (${top.map((e) => e.name).join(', ')})`);
  return top[0];
}

async function readTarPackage(path: string): Promise<ModelPackage> {
  // Only these two are read at listing time, and only up to their bound; the model's bytes wait for readModel().
  const metadata = (e: TarEntry) => {
    const wanted = [CONFIG_FILE, LABELS_FILE].includes(posix.basename(e.name));
    if (wanted && e.size > METADATA_MAX_BYTES) throw tooLarge(path, e.name, e.size);
    return wanted;
  };
  const { entries, data } = await readTar(fileSource(path), metadata);
  const configEntry = findConfig(path, entries);
  const folder = posix.dirname(configEntry.name);
  const inFolder = (name: string) => (folder === '.' ? name : `${folder}/${name}`);
  const find = (name: string) => entries.find((e) => e.type === 'file' && e.name === inFolder(name));

  const config = parseJson(path, configEntry.name, data.get(configEntry.name)!, PackageConfigSchema);
  // Without labels.json the package runs on the production map, as a bare model does (spec 02 ships
  // rf_detr_edge4.tar as the .dlc and config.json); the head's size is still checked at load.
  const labelsEntry = find(LABELS_FILE);
  const labels = labelsEntry ? parseJson(path, labelsEntry.name, data.get(labelsEntry.name)!, PackageLabelsSchema) : null;

  const format = modelFormatOf(config.model);
  if (!format) throw invalid(path, `config.json names model "${config.model}", which is neither .dlc nor .onnx`);
  const modelEntry = find(config.model);
  if (!modelEntry) throw invalid(path, `config.json names model "${config.model}" but the package holds no ${inFolder(config.model)}`);
  if (modelEntry.size === 0) throw invalid(path, `the model file ${modelEntry.name} is empty`);

  return {
    kind: 'tar',
    path,
    modelName: config.model,
    modelFormat: format,
    modelSize: modelEntry.size,
    config,
    labels,
    readModel: async () => {
      // A second pass re-checks the whole archive, so a package replaced since listing is caught.
      const again = await readTar(fileSource(path), (e) => e.name === modelEntry.name);
      const bytes = again.data.get(modelEntry.name);
      if (bytes?.length !== modelEntry.size)
        throw invalid(path, `the package changed while loading (${modelEntry.name} is no longer ${modelEntry.size} bytes)`);
      return bytes;
    },
  };
}
