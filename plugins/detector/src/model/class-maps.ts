/**
 * The class taxonomies of spec 02. The two id spaces differ (person is 0 in production, 8 in Omni),
 * which is why every non-production head needs an explicit remap before its detections are published.
 */
import { PRODUCTION_HEAD_SIZE, PRODUCTION_NAMED_LABELS } from 'lookout/core/contracts';

export type ClassMapName = 'production' | 'omni15' | 'custom';

export const PERSON_CLASS_ID = 0;
/** Spec 02 limits: person counts only from class 0 at this confidence or more. */
export const PERSON_CONFIDENCE_GATE = 0.35;
/** Production weapon set: gun, knife, rifle, shotgun. */
export const WEAPON_CLASS_IDS: readonly number[] = Object.freeze([10, 11, 12, 13]);
/** The production parse head has 23 slots (0..22). */
export const PRODUCTION_CLASS_COUNT = PRODUCTION_HEAD_SIZE;

/**
 * Production precomp map. Slots 14..22 exist in the head but the spec gives them no labels, so they
 * stay null rather than invented names.
 */
export const PRODUCTION_LABELS: readonly (string | null)[] = Object.freeze([
  ...PRODUCTION_NAMED_LABELS,
  ...new Array<null>(PRODUCTION_HEAD_SIZE - PRODUCTION_NAMED_LABELS.length).fill(null),
]);

export type OmniGroup = 'weapons' | 'transit' | 'people' | 'signage' | 'cleanliness';

export interface OmniClass {
  id: number;
  label: string;
  group: OmniGroup;
  /** Where the class is consumed beyond detection (spec 02): TrOCR on precision, QR on macro. */
  route?: 'text_recognition_precision' | 'qr_decode_macro';
}

export const OMNI15_CLASSES: readonly OmniClass[] = Object.freeze([
  { id: 0, label: 'handgun', group: 'weapons' },
  { id: 1, label: 'rifle', group: 'weapons' },
  { id: 2, label: 'knife', group: 'weapons' },
  { id: 3, label: 'car', group: 'transit' },
  { id: 4, label: 'bus', group: 'transit' },
  { id: 5, label: 'truck', group: 'transit' },
  { id: 6, label: 'motorcycle', group: 'transit' },
  { id: 7, label: 'bicycle', group: 'transit' },
  { id: 8, label: 'person', group: 'people' },
  { id: 9, label: 'face', group: 'people' },
  { id: 10, label: 'license_plate', group: 'signage', route: 'text_recognition_precision' },
  { id: 11, label: 'sign', group: 'signage', route: 'text_recognition_precision' },
  { id: 12, label: 'qr_code', group: 'signage', route: 'qr_decode_macro' },
  { id: 13, label: 'trash_pile', group: 'cleanliness' },
  { id: 14, label: 'debris', group: 'cleanliness' },
] satisfies OmniClass[]);

export const OMNI15_LABELS: readonly string[] = Object.freeze(OMNI15_CLASSES.map((c) => c.label));
export const OMNI15_PERSON_ID = 8;

/** Weapons builder ontology default (spec 02). */
export const WEAPONS_ONTOLOGY_DEFAULT: readonly string[] = Object.freeze(['handgun', 'rifle', 'knife', 'backpack']);

/**
 * A remap an operator may copy into an Omni package's labels.json. It is never applied implicitly:
 * Omni weights load only when their labels.json carries a remap. Classes with no production slot
 * (motorcycle, face, plates, signs, QR, cleanliness) are left out and so are not published as dets.
 */
export const OMNI15_TO_PRODUCTION_EXAMPLE: Readonly<Record<string, number>> = Object.freeze({
  '0': 10, // handgun -> gun
  '1': 12, // rifle
  '2': 11, // knife
  '3': 2, // car
  '4': 3, // bus
  '5': 5, // truck
  '7': 1, // bicycle
  '8': 0, // person
});

export function productionLabel(id: number): string | null {
  return PRODUCTION_LABELS[id] ?? null;
}

export function isWeaponClass(id: number): boolean {
  return WEAPON_CLASS_IDS.includes(id);
}

/** The person gate: production class 0 with p >= 0.35. */
export function passesPersonGate(det: { c: number; p: number }): boolean {
  return det.c === PERSON_CLASS_ID && det.p >= PERSON_CONFIDENCE_GATE;
}

export function countGatedPersons(dets: readonly { c: number; p: number }[]): number {
  let n = 0;
  for (const d of dets) if (passesPersonGate(d)) n++;
  return n;
}
