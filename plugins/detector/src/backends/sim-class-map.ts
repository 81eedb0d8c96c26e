import { OMNI15_LABELS, OMNI15_TO_PRODUCTION_EXAMPLE } from '../model/class-maps.js';
import { productionClassMap, resolveClassMap, type ResolvedClassMap } from '../model/class-remap.js';
import { publishedClasses, type PublishedClass } from '../model/published-classes.js';

/**
 * Which weights the simulated detector pretends to run (SIM_DET_CLASS_MAP). production: the
 * production head, ground truth by its production id (plates and signs have none and are never
 * seen). omni15: an Omni package, so the precision role's text cascade has plates and signs to read.
 */
export const SIM_CLASS_MAPS = ['production', 'omni15'] as const;
export type SimClassMapName = (typeof SIM_CLASS_MAPS)[number];

/**
 * The remap of the simulated Omni package, as an operator would write it in labels.json: the example
 * remap, plus license_plate (10) and sign (11) on production slots 14 and 15, which production leaves
 * unnamed, so they are published under the model's own labels.
 */
export const SIM_OMNI15_REMAP: Readonly<Record<string, number>> = Object.freeze({ ...OMNI15_TO_PRODUCTION_EXAMPLE, '10': 14, '11': 15 });

/** The classes a simulated head publishes and how a ground-truth object gets its dets id. */
export interface SimClassMap {
  readonly name: SimClassMapName;
  readonly resolved: ResolvedClassMap;
  readonly classes: readonly PublishedClass[];
  /** The dets id of a ground-truth object, or -1 when these weights have no class for it. */
  idOf(truth: { classId: number; label: string }): number;
}

export function simClassMap(name: SimClassMapName): SimClassMap {
  if (name === 'production') {
    const resolved = productionClassMap();
    // Ground truth carries production ids, so the sim publishes the production head's.
    return { name, resolved, classes: publishedClasses(resolved), idOf: (truth) => truth.classId };
  }
  // Through the real labels.json check, so the sim's remap obeys the rules a package's must (person to 0 only).
  const resolved = resolveClassMap({
    classes: [...OMNI15_LABELS],
    class_map: 'omni15',
    remap: { ...SIM_OMNI15_REMAP },
    version: 'sim',
    ontology_hash: 'sim',
    train_job_id: 'sim',
    input_shape: [1, 3, 640, 640],
  });
  const classes = publishedClasses(resolved);
  // A scene labels its objects with production names (gun) or, outside production, Omni's (license_plate);
  // a published class answers to both its name and its model labels (gun is Omni's handgun).
  const byLabel = new Map<string, number>();
  for (const c of classes) for (const label of [c.name, ...c.model_labels]) if (label !== null) byLabel.set(label, c.id);
  return { name, resolved, classes, idOf: (truth) => byLabel.get(truth.label) ?? -1 };
}
