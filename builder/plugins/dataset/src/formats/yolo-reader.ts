import { LookoutError } from 'lookout/core';
import type { DatasetStorage } from '../storage/dataset-storage.js';
import { clipOf } from './clip-of.js';
import { listTree, parseNamesFile, twinOf } from './tree-listing.js';
import { parseYoloLabels } from './yolo-labels.js';
import { isImagePath, stripExtension, type FormatReader, type SourceFrame } from './source-frame.js';

export interface TreeReadOptions {
  storage: DatasetStorage;
  uri: string;
  maxFiles: number;
  maxLabelBytes: number;
  /** Pair each image with its twin under thermal/ (same relative path). */
  thermal: boolean;
  /** Class names by index, when the tree has no names file. */
  classNames?: readonly string[];
}

const NAMES_FILES = ['classes.txt', 'obj.names', 'labels/classes.txt'];

/**
 * A YOLO tree: `images/**` beside `labels/**` (the same relative path, `.txt`), class names in
 * classes.txt or obj.names (or given with the import); an optional `thermal/**` mirrors `images/`.
 */
export async function yoloReader(o: TreeReadOptions): Promise<FormatReader> {
  const files = await listTree(o.storage, o.uri, o.maxFiles);
  const namesFile = NAMES_FILES.find((f) => files.has(f));
  const names = o.classNames ?? (namesFile ? parseNamesFile((await o.storage.read(o.uri, namesFile, o.maxLabelBytes)).toString('utf8')) : undefined);
  if (!names) {
    throw new LookoutError('dataset.format_invalid', `${o.uri}: a YOLO tree needs its class names: classes.txt or obj.names, or class_names in the import`, {
      details: { uri: o.uri, looked_for: NAMES_FILES },
    });
  }
  const images = [...files].filter((f) => f.startsWith('images/') && isImagePath(f));
  if (images.length === 0) throw new LookoutError('dataset.format_invalid', `${o.uri}: no images under images/`, { details: { uri: o.uri } });
  const used = new Set<string>();
  return {
    format: 'yolo',
    count: images.length,
    *frames(): Iterable<() => Promise<SourceFrame>> {
      for (const image of images) {
        const rel = image.slice('images/'.length);
        const label = `labels/${stripExtension(rel)}.txt`;
        used.add(label);
        yield async () => {
          const parsed = files.has(label)
            ? parseYoloLabels((await o.storage.read(o.uri, label, o.maxLabelBytes)).toString('utf8'), names)
            : { boxes: [], malformed: 0 };
          const thermal = o.thermal ? twinOf(files, 'thermal', rel) : undefined;
          return { image, clip: clipOf(rel), boxes: parsed.boxes, malformedLines: parsed.malformed, ...(thermal ? { thermal } : {}) };
        };
      }
    },
    orphans: () => [...files].filter((f) => f.startsWith('labels/') && f.endsWith('.txt') && !NAMES_FILES.includes(f) && !used.has(f)),
  };
}
