import { OMNI15_CLASSES, OMNI15_PERSON_ID, PERSON_CLASS_ID, PRODUCTION_LABELS, WEAPONS_ONTOLOGY_DEFAULT } from 'lookout/plugins/detector';
import type { OntologyClassMap } from './service.js';

export interface ClassMapPreset {
  name: string;
  description: string;
  class_map: OntologyClassMap;
  classes: readonly string[];
  /** Where the fleet's remap expects person (undefined: the preset has no person). */
  person_id?: number;
}

const productionNamed = PRODUCTION_LABELS.filter((l): l is string => l !== null);

/**
 * The class lists spec 02 names, importable as ontologies. The production map's head slots 14-22 are
 * left out: the spec gives them no labels and they are not to be invented.
 */
export const CLASS_MAP_PRESETS: readonly ClassMapPreset[] = [
  {
    name: 'weapons',
    description: 'The weapons builder ontology default: 0 handgun, 1 rifle, 2 knife, 3 backpack',
    class_map: 'custom',
    classes: WEAPONS_ONTOLOGY_DEFAULT,
  },
  {
    name: 'production',
    description: 'The production precomp map (person 0, weapons 10-13; slots 14-22 unnamed and left out)',
    class_map: 'production',
    classes: productionNamed,
    person_id: PERSON_CLASS_ID,
  },
  {
    name: 'omni15',
    description: 'The Omni 15-class map (person 8; deploying it needs the remap to production ids)',
    class_map: 'omni15',
    classes: OMNI15_CLASSES.map((c) => c.label),
    person_id: OMNI15_PERSON_ID,
  },
];

export const PRESET_NAMES = ['weapons', 'production', 'omni15'] as const;

export function preset(name: string): ClassMapPreset | undefined {
  return CLASS_MAP_PRESETS.find((p) => p.name === name);
}
