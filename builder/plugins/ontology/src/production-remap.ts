import { PRODUCTION_LABELS } from 'lookout/plugins/detector';

/** Names the builder's class lists use for a production class of another name. */
const ALIASES: Readonly<Record<string, string>> = { handgun: 'gun', pistol: 'gun', cellphone: 'cell_phone', phone: 'cell_phone' };

/**
 * A class list's remap to production ids, by name: each class the production head names (through an
 * alias where the names differ: Omni's handgun is production's gun) maps to its id; the others have no
 * production id and are left out, so the detector publishes them under no production class. The
 * result equals the spec's Omni remap for the Omni list (person 8 → 0, handgun 0 → 10…).
 */
export function productionRemap(classes: readonly string[]): Record<string, number> {
  const remap: Record<string, number> = {};
  classes.forEach((name, i) => {
    const id = PRODUCTION_LABELS.indexOf(ALIASES[name] ?? name);
    if (id >= 0) remap[String(i)] = id;
  });
  return remap;
}
