import { LookoutError } from 'lookout/core';
import { article, backendForFormat, backendRecord, type ModelBackendName } from '../backends/backend-records.js';
import { PRODUCTION_CLASS_COUNT } from './class-maps.js';
import { resolveClassMap, type ResolvedClassMap } from './class-remap.js';
import { readModelPackage, type ModelPackage } from './read-package.js';
import type { InputShape } from './shape-check.js';

export interface PreparedModel {
  pkg: ModelPackage;
  classMap: ResolvedClassMap;
  /** labels.json's input_shape; null for a package or bare model without labels.json. */
  declaredShape: InputShape | null;
}

/**
 * The checks every back-end runs before touching a runtime: the package reads and validates, its
 * format is one the back-end's record runs (and config.json's backend names that back-end), and its
 * classes map to production ids. Shape checks follow in the back-end, which alone knows the model
 * file's real input shape.
 */
export async function prepareModel(modelPath: string, backend: ModelBackendName, read?: ModelPackage | null): Promise<PreparedModel> {
  const record = backendRecord(backend);
  const formats = record.capabilities.modelFormats;
  // The package is read once when the back-end was chosen from its config.json: a tar is listed in full.
  const pkg = read?.path === modelPath ? read : await readModelPackage(modelPath);
  const format = pkg.modelFormat;
  const named = pkg.config ? backendRecord(pkg.config.backend) : null;
  if (named && !named.capabilities.modelFormats.includes(format)) {
    throw new LookoutError(
      'model_package_invalid',
      `${modelPath}: config.json says backend ${named.name}, which runs ${named.capabilities.modelFormats.map((f) => `.${f}`).join(' or ')} models, ` +
        `but names ${pkg.modelName}, ${article(format)} .${format} model`,
    );
  }
  if (!formats.includes(format)) {
    const runner = backendForFormat(format);
    throw new LookoutError(
      'model_package_invalid',
      `${modelPath}: the ${record.name} back-end runs ${formats.map((f) => `.${f}`).join(' or ')} models but ${pkg.modelName} is a .${format} ` +
        (runner ? `(run it with RF_DETR_BACKEND=${runner.name})` : '(no back-end runs it)'),
    );
  }
  if (pkg.config && pkg.config.backend !== record.name) {
    throw new LookoutError(
      'model_package_invalid',
      `${modelPath}: config.json says backend ${pkg.config.backend} but ${pkg.modelName} is ${article(format)} .${format} model (backend ${record.name})`,
    );
  }
  const classMap = resolveClassMap(pkg.labels);
  const declaredShape = pkg.labels ? ([...pkg.labels.input_shape] as InputShape) : null;
  return { pkg, classMap, declaredShape };
}

/**
 * The model head's class count against the package's class list, as soon as it is known (from the
 * model metadata at load, else from the first inference: a .dlc's head is readable only through the
 * vendor runtime). Fail closed: without labels.json only the production head's ids are production
 * ids; an Omni head run as production would publish handguns (Omni 0) as persons.
 */
export function checkModelHead(prepared: PreparedModel, classes: number): void {
  const { pkg } = prepared;
  const where = `${pkg.path}: ${pkg.modelName}`;
  if (pkg.labels && pkg.labels.classes.length > classes) {
    throw new LookoutError('model_package_invalid', `${where}: labels.json lists ${pkg.labels.classes.length} classes but the model head has ${classes}`);
  }
  if (!pkg.labels && classes !== PRODUCTION_CLASS_COUNT) {
    throw new LookoutError(
      'model_class_map_unmapped',
      `${where} has a ${classes}-class head and no labels.json beside it; only the ${PRODUCTION_CLASS_COUNT}-class production ` +
        'head may load without a class list and remap',
    );
  }
}
