export const SPLITS = ['train', 'val', 'test'] as const;
export type Split = (typeof SPLITS)[number];

/** A box as the source gives it: YOLO's normalised centre and size, before clamping. */
export interface SourceBox {
  className: string;
  cx: number;
  cy: number;
  w: number;
  h: number;
}

/** A frame of a dataset tree, as a format reader finds it, before the image is read. */
export interface SourceFrame {
  /** The image, relative to the tree. */
  image: string;
  /** Frames of one clip stay in one split. */
  clip: string;
  /** The split an export assigned (YOLOv8's data.yaml), kept unless the import asks to resplit. */
  sourceSplit?: Split;
  boxes: SourceBox[];
  /** Label lines that could not be read (not five numbers, a class index that is not an integer). */
  malformedLines: number;
  /**
   * Set when the boxes are COCO's pixel `[x, y, w, h]` (top-left corner) rather than normalised
   * centres: the size to normalise with, or {} to use the image's own.
   */
  pixelBoxes?: { width?: number; height?: number };
  /** The thermal twin of the image, relative to the tree, when the tree has one. */
  thermal?: string;
}

/** What a format reader gives the import: its frames, streamed, and facts for the report. */
export interface FormatReader {
  format: 'yolo' | 'coco' | 'yolov8';
  /** How many frames frames() yields (for progress). */
  count: number;
  /** A loader per frame, in order (each reads the frame's label file): the import runs a few ahead. */
  frames(): Iterable<() => Promise<SourceFrame>>;
  /** Files the reader could not pair (a label file without its image). */
  orphans(): string[];
}

export const IMAGE_EXTENSIONS = ['.jpg', '.jpeg', '.png'];

export function isImagePath(path: string): boolean {
  const lower = path.toLowerCase();
  return IMAGE_EXTENSIONS.some((e) => lower.endsWith(e));
}

export function stripExtension(path: string): string {
  return path.replace(/\.[^./]+$/, '');
}
