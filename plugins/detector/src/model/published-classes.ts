import { productionLabel } from './class-maps.js';
import type { ResolvedClassMap } from './class-remap.js';

/**
 * One class as `dets` carry it: the production id after the remap, its name, and the model's own
 * labels that map to it (an Omni handgun is published as gun, 10). Snake case: it goes on the wire as is.
 */
export interface PublishedClass {
  id: number;
  /** The production name; for a slot production leaves unnamed (14-22), the package's label, else null. */
  name: string | null;
  model_labels: string[];
}

/**
 * The classes a loaded model can publish, in dets ids, by id. A status listing the model's own
 * class list instead would put Omni's handgun at 0, where dets carry person. `headClasses` is the
 * model head's size once known: model classes past it never occur.
 */
export function publishedClasses(map: ResolvedClassMap, headClasses: number | null = null): PublishedClass[] {
  const byId = new Map<number, PublishedClass>();
  const end = headClasses === null ? map.remap.length : Math.min(headClasses, map.remap.length);
  for (let index = 0; index < end; index++) {
    const id = map.remap[index];
    if (id < 0) continue; // dropped: no production id
    const label = map.classes[index];
    const entry = byId.get(id) ?? { id, name: productionLabel(id), model_labels: [] };
    if (label !== undefined) {
      entry.model_labels.push(label);
      entry.name ??= label;
    }
    byId.set(id, entry);
  }
  return [...byId.values()].sort((a, b) => a.id - b.id);
}
