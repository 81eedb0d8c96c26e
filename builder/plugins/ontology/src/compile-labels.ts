import { createHash } from 'node:crypto';
import { LookoutError } from 'lookout/core';
import type { CompiledLabels, OntologyConfig } from './service.js';
import { productionRemap } from './production-remap.js';

/**
 * The content hash of a class list: the same classes in the same order give the same hash, whatever
 * the ontology's name, when or how often it is compiled.
 */
export function ontologyHash(classes: readonly string[]): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(classes)).digest('hex')}`;
}

export interface PersonGuard {
  /** Where the fleet's remap expects person: the last compiled version's id, or the imported map's. */
  expected?: number;
  /** The caller's acknowledgement of a move: the new id (or null: person removed on purpose). */
  acknowledged?: number | null;
}

/**
 * ontology_config.json → labels.json. Refuses a class list that would silently move person off the
 * id the fleet's remap expects (spec 02: Omni weights deployed without remapping break person
 * counting): the refusal names the class and both ids; a compile that means it says so with person_id.
 */
export function compileLabels(config: OntologyConfig, guard: PersonGuard, version: string, now: Date): CompiledLabels {
  const personAt = config.classes.indexOf('person');
  const now_ = personAt >= 0 ? personAt : null;
  if (guard.expected !== undefined && now_ !== guard.expected && guard.acknowledged !== now_) {
    throw new LookoutError(
      'ontology.person_id_moved',
      now_ === null
        ? `class "person" was at id ${guard.expected}, where the fleet's remap expects it, and this compile removes it; send person_id: null to compile it anyway`
        : `class "person" would move from id ${guard.expected}, where the fleet's remap expects it, to id ${now_}; send person_id: ${now_} to compile it with a new remap`,
      { details: { class: 'person', expected_id: guard.expected, new_id: now_ } },
    );
  }
  const labels: CompiledLabels = {
    ontology: config.name,
    version,
    ontology_hash: ontologyHash(config.classes),
    class_map: config.class_map,
    classes: [...config.classes],
    compiled_at: now.toISOString(),
  };
  // A production head needs no remap (its ids are the fleet's); every other head loads only with one.
  if (config.class_map !== 'production') labels.remap = productionRemap(config.classes);
  return labels;
}
