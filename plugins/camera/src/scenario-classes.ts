import { PRODUCTION_NAMED_LABELS } from 'lookout/core/contracts';

/**
 * What a scenario object can be. Production class ids follow spec 02's production map (person 0,
 * weapons 10-13). Licence plates and signs have no production id (slots 14-22 are unnamed and their
 * labels must not be invented), so their ground truth carries NO_PRODUCTION_CLASS and the production
 * detector never reports them; they are in the scene for the precision role's text cascade.
 */

/** classId of ground-truth objects outside the production class map (license_plate, sign). */
export const NO_PRODUCTION_CLASS = -1;

/** Production labels in id order (ids 0-13). */
export const PRODUCTION_LABELS = PRODUCTION_NAMED_LABELS;

export const EXTRA_LABELS = ['license_plate', 'sign'] as const;

export const SCENE_LABELS = [...PRODUCTION_LABELS, ...EXTRA_LABELS] as const;
export type SceneLabel = (typeof SCENE_LABELS)[number];

export function classIdOf(label: SceneLabel): number {
  const id = (PRODUCTION_LABELS as readonly string[]).indexOf(label);
  return id >= 0 ? id : NO_PRODUCTION_CLASS;
}

/** Real-world width and height in metres, used when a scenario object gives no size. */
export const DEFAULT_SIZE_M: Record<SceneLabel, [number, number]> = {
  person: [0.5, 1.75],
  bicycle: [1.7, 1.05],
  car: [4.4, 1.5],
  bus: [11, 3.2],
  train: [20, 3.8],
  truck: [8, 3.5],
  backpack: [0.35, 0.45],
  handbag: [0.35, 0.25],
  suitcase: [0.45, 0.65],
  cell_phone: [0.08, 0.15],
  gun: [0.22, 0.14],
  knife: [0.3, 0.05],
  rifle: [1.0, 0.22],
  shotgun: [1.1, 0.2],
  license_plate: [0.52, 0.11],
  sign: [0.75, 0.75],
};

/** Colours (#rrggbb) chosen to stand out from the grey-green background. */
export const DEFAULT_COLOUR: Record<SceneLabel, string> = {
  person: '#d9482b',
  bicycle: '#2b6fd9',
  car: '#1e88e5',
  bus: '#f2c200',
  train: '#7b1fa2',
  truck: '#e65100',
  backpack: '#00897b',
  handbag: '#ad1457',
  suitcase: '#5d4037',
  cell_phone: '#111111',
  gun: '#000000',
  knife: '#e0e0e0',
  rifle: '#212121',
  shotgun: '#3e2723',
  license_plate: '#fafafa',
  sign: '#1565c0',
};
