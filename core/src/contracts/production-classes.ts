/**
 * The production precomp class map (spec 02): named ids 0-13 (person 0, weapons 10-13). The head has
 * slots 14-22 too; the spec names none of them and their labels are not to be invented.
 */
export const PRODUCTION_NAMED_LABELS = [
  'person',
  'bicycle',
  'car',
  'bus',
  'train',
  'truck',
  'backpack',
  'handbag',
  'suitcase',
  'cell_phone',
  'gun',
  'knife',
  'rifle',
  'shotgun',
] as const;

/** Size of the production head, unnamed slots included. */
export const PRODUCTION_HEAD_SIZE = 23;
