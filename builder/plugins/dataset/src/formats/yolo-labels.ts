import type { SourceBox } from './source-frame.js';

/**
 * A YOLO label file: one `class cx cy w h` line per box (normalised). The class is an index into
 * `names`; an index with no name is kept as `#<index>`, which the import reports as an unknown class.
 */
export function parseYoloLabels(text: string, names: readonly string[]): { boxes: SourceBox[]; malformed: number } {
  const boxes: SourceBox[] = [];
  let malformed = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const numbers = line.split(/\s+/).map(Number);
    const isBox = numbers.length === 5;
    // A segmentation line is a class and a polygon (x y pairs, three or more): its box is the polygon's bounds.
    const isPolygon = numbers.length >= 7 && numbers.length % 2 === 1;
    if ((!isBox && !isPolygon) || numbers.some((n) => !Number.isFinite(n)) || !Number.isInteger(numbers[0]) || numbers[0] < 0) {
      malformed++;
      continue;
    }
    const cls = numbers[0];
    const className = names[cls] ?? `#${cls}`;
    if (isBox) {
      const [, cx, cy, w, h] = numbers;
      boxes.push({ className, cx, cy, w, h });
      continue;
    }
    const xs = numbers.filter((_, i) => i > 0 && i % 2 === 1);
    const ys = numbers.filter((_, i) => i > 0 && i % 2 === 0);
    const [x1, x2, y1, y2] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    boxes.push({ className, cx: (x1 + x2) / 2, cy: (y1 + y2) / 2, w: x2 - x1, h: y2 - y1 });
  }
  return { boxes, malformed };
}
