import { posix } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { LookoutError } from 'lookout/core';
import { clipOf } from './clip-of.js';
import { listTree, twinOf } from './tree-listing.js';
import { parseYoloLabels } from './yolo-labels.js';
import { isImagePath, stripExtension, type FormatReader, type SourceFrame, type Split } from './source-frame.js';
import type { TreeReadOptions } from './yolo-reader.js';

const SPLIT_KEYS: Record<string, Split> = { train: 'train', val: 'val', valid: 'val', test: 'test' };

/**
 * A YOLOv8 (Ultralytics) export: data.yaml names the classes (`names`, a list or an id map) and the
 * image folder of each split (`train`, `val`, `test`, relative to `path` or to the yaml); labels lie
 * at the image's path with its last `images` folder replaced by `labels`. The export's splits are kept.
 */
export async function yolov8Reader(o: TreeReadOptions): Promise<FormatReader> {
  const files = await listTree(o.storage, o.uri, o.maxFiles);
  const yamlFile = ['data.yaml', 'data.yml'].find((f) => files.has(f));
  if (!yamlFile) throw invalid(o.uri, 'a YOLOv8 export has data.yaml at its root');
  let data: Record<string, unknown>;
  try {
    data = parseYaml((await o.storage.read(o.uri, yamlFile, o.maxLabelBytes)).toString('utf8'), { maxAliasCount: 100 }) as Record<string, unknown>;
  } catch (err) {
    throw invalid(o.uri, `data.yaml does not parse: ${(err as Error).message}`);
  }
  if (typeof data !== 'object' || data === null) throw invalid(o.uri, 'data.yaml is not a mapping');
  const names = readNames(o.uri, data.names);
  // `path` is the export's root as it was on the exporting machine: only a relative one means something here.
  const base = typeof data.path === 'string' && !posix.isAbsolute(data.path) ? posix.normalize(data.path).replace(/^\.\/?$/, '') : '';
  const splitDirs: [Split, string][] = [];
  for (const [key, split] of Object.entries(SPLIT_KEYS)) {
    const value = data[key];
    for (const dir of typeof value === 'string' ? [value] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []) {
      const rel = posix.normalize(posix.join(base, dir.replace(/^\.\//, ''))).replace(/\/$/, '');
      if (rel.startsWith('..') || posix.isAbsolute(rel)) throw invalid(o.uri, `data.yaml ${key}: ${dir} is outside the export`);
      splitDirs.push([split, rel]);
    }
  }
  if (splitDirs.length === 0) throw invalid(o.uri, 'data.yaml names no split (train, val, test)');
  const used = new Set<string>();
  const imagesOf = new Map(splitDirs.map(([, dir]) => [dir, [...files].filter((f) => f.startsWith(`${dir}/`) && isImagePath(f))]));
  return {
    format: 'yolov8',
    count: [...imagesOf.values()].reduce((n, l) => n + l.length, 0),
    *frames(): Iterable<() => Promise<SourceFrame>> {
      for (const [split, dir] of splitDirs) {
        for (const image of imagesOf.get(dir)!) {
          const rel = image.slice(dir.length + 1);
          const label = `${stripExtension(labelPathOf(image))}.txt`;
          used.add(label);
          yield async () => {
            const parsed = files.has(label)
              ? parseYoloLabels((await o.storage.read(o.uri, label, o.maxLabelBytes)).toString('utf8'), names)
              : { boxes: [], malformed: 0 };
            const thermal = o.thermal ? twinOf(files, `thermal/${dir}`, rel) : undefined;
            return { image, clip: clipOf(rel), sourceSplit: split, boxes: parsed.boxes, malformedLines: parsed.malformed, ...(thermal ? { thermal } : {}) };
          };
        }
      }
    },
    orphans: () => [...files].filter((f) => /(^|\/)labels\//.test(f) && f.endsWith('.txt') && !used.has(f)),
  };
}

/** `a/images/train/x.jpg` → `a/labels/train/x.jpg` (the last `images` folder). */
function labelPathOf(image: string): string {
  const parts = image.split('/');
  const i = parts.lastIndexOf('images');
  if (i >= 0) parts[i] = 'labels';
  return parts.join('/');
}

function readNames(uri: string, names: unknown): string[] {
  if (Array.isArray(names) && names.every((n) => typeof n === 'string')) return names;
  if (names && typeof names === 'object') {
    const out: string[] = [];
    for (const [k, v] of Object.entries(names)) {
      if (!/^\d+$/.test(k) || typeof v !== 'string') throw invalid(uri, 'data.yaml names: a list of names or a map of id to name');
      out[Number(k)] = v;
    }
    return Array.from(out, (n, i) => n ?? `#${i}`);
  }
  throw invalid(uri, 'data.yaml has no names');
}

function invalid(uri: string, why: string): LookoutError {
  return new LookoutError('dataset.format_invalid', `${uri}: ${why}`, { details: { uri } });
}
