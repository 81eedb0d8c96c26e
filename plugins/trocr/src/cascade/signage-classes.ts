/** The Omni labels the precision role reads (spec 02: license_plate 10, sign 11, "text recognition on precision role"). */
export const TEXT_LABELS = ['license_plate', 'sign'] as const;
export type TextLabel = (typeof TEXT_LABELS)[number];

/** A class as the detector publishes it: the id dets carry, with the model's own labels mapped to it. */
export interface PublishedClassLike {
  id: number;
  name: string | null;
  model_labels: readonly string[];
}

export interface TextClass {
  id: number;
  label: TextLabel;
}

/**
 * The dets ids that carry plates and signs. They come through the package's remap (an Omni head's 10
 * and 11 sent to free production slots), so they are found by the model's labels, never assumed:
 * the production map has no such class, and then the list is empty.
 */
export function textClasses(classes: readonly PublishedClassLike[]): TextClass[] {
  const out: TextClass[] = [];
  for (const c of classes) {
    const label = TEXT_LABELS.find((l) => c.model_labels.includes(l) || c.name === l);
    if (label) out.push({ id: c.id, label });
  }
  return out.sort((a, b) => a.id - b.id);
}
