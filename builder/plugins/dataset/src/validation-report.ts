import type { ValidationReport } from './service.js';

/** Examples kept per kind of problem: the counts are exact, the lists only show where to look. */
const EXAMPLES = 20;

export function emptyReport(): ValidationReport {
  return {
    frames_seen: 0,
    frames_imported: 0,
    boxes_imported: 0,
    unknown_classes: {},
    boxes_clamped: 0,
    boxes_degenerate: 0,
    label_lines_malformed: 0,
    frames_unlabelled: 0,
    empty_images: { count: 0, examples: [] },
    corrupt_images: { count: 0, examples: [] },
    duplicate_frames: { count: 0, examples: [] },
    thermal_unpaired: { count: 0, examples: [] },
    orphan_labels: { count: 0, examples: [] },
    classes_in_too_few_clips: [],
  };
}

/** Counts one more of a kind and keeps it as an example while there are few. */
export function note<T>(entry: { count: number; examples: T[] }, example: T): void {
  entry.count++;
  if (entry.examples.length < EXAMPLES) entry.examples.push(example);
}
