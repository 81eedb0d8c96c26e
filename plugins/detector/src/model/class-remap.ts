import { LookoutError } from 'lookout/core';
import { OMNI15_LABELS, PERSON_CLASS_ID, PRODUCTION_CLASS_COUNT, PRODUCTION_LABELS, type ClassMapName } from './class-maps.js';
import type { PackageLabels } from './package-schema.js';

export interface ResolvedClassMap {
  name: ClassMapName;
  /** The model's class list (model index -> label), as versioned with the model file. */
  classes: string[];
  /** Model class index -> production id; -1 (or past the end) drops the class. */
  remap: Int32Array;
}

const productionNamed = PRODUCTION_LABELS.filter((l): l is string => l !== null);

/** Production ids pass as they are; head slots past 22 have no production id and are dropped. */
function identityRemap(): Int32Array {
  return Int32Array.from({ length: PRODUCTION_CLASS_COUNT }, (_, i) => i);
}

/** A bare production model with no labels.json: the production head, ids as they are. */
export function productionClassMap(): ResolvedClassMap {
  return { name: 'production', classes: [...productionNamed], remap: identityRemap() };
}

function unmapped(message: string): LookoutError {
  return new LookoutError('model_class_map_unmapped', message);
}

function invalid(message: string): LookoutError {
  return new LookoutError('model_package_invalid', message);
}

/**
 * Turns labels.json into the remap the decoder applies. Fail closed: anything but a production head
 * needs an explicit remap (unmapped, an Omni head would publish handguns, Omni 0, as persons and
 * persons, Omni 8, as suitcases), and a remap must send person, and only person, to production 0.
 */
export function resolveClassMap(labels: PackageLabels | null): ResolvedClassMap {
  if (!labels) return productionClassMap();
  const { classes, class_map: name } = labels;

  if (name === 'production') {
    if (classes.length > PRODUCTION_CLASS_COUNT) {
      throw invalid(`labels.json: class_map production has ${PRODUCTION_CLASS_COUNT} slots but lists ${classes.length} classes`);
    }
    classes.forEach((label, i) => {
      const expected = PRODUCTION_LABELS[i];
      if (expected && label !== expected) {
        throw invalid(`labels.json: class_map production has "${expected}" at ${i} but the class list says "${label}"`);
      }
    });
  }
  if (name === 'omni15') {
    const differs = OMNI15_LABELS.length !== classes.length || OMNI15_LABELS.some((l, i) => classes[i] !== l);
    if (differs) throw invalid(`labels.json: class_map omni15 needs the 15 Omni classes in order (${OMNI15_LABELS.join(', ')})`);
  }

  if (!labels.remap) {
    if (name === 'production') return { name, classes: [...classes], remap: identityRemap() };
    throw unmapped(
      `labels.json: class_map ${name} has no remap to production ids; ${name === 'omni15' ? 'Omni person is 8, production person is 0, so ' : ''}` +
        `unmapped weights would break person counting. Add "remap": { "<model index>": <production id>, … }`,
    );
  }

  const remap = new Int32Array(classes.length).fill(-1);
  for (const [key, target] of Object.entries(labels.remap)) {
    const index = Number(key);
    if (index >= classes.length) throw invalid(`labels.json: remap names model class ${index} but the class list has ${classes.length}`);
    if (target >= PRODUCTION_CLASS_COUNT) {
      throw invalid(`labels.json: remap sends ${classes[index]} (${index}) to ${target}; production ids are 0..${PRODUCTION_CLASS_COUNT - 1}`);
    }
    remap[index] = target;
  }
  classes.forEach((label, i) => {
    if (label === 'person' && remap[i] !== PERSON_CLASS_ID) {
      throw unmapped(`labels.json: remap must send person (model class ${i}) to production ${PERSON_CLASS_ID}, not ${remap[i] === -1 ? 'nothing' : remap[i]}`);
    }
    if (label !== 'person' && remap[i] === PERSON_CLASS_ID) {
      throw unmapped(`labels.json: remap sends ${label} (model class ${i}) to production ${PERSON_CLASS_ID}, which is person`);
    }
  });
  return { name, classes: [...classes], remap };
}
