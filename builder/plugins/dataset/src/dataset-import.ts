import { createHash } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { isLookoutError } from 'lookout/core';
import type { DatasetStorage } from './storage/dataset-storage.js';
import type { FormatReader, SourceFrame } from './formats/source-frame.js';
import type { DatasetStore, FrameRow } from './dataset-store.js';
import type { ValidationReport } from './service.js';
import { checkImage } from './image-header.js';
import { clampBox, fromPixels } from './clamp-box.js';
import { emptyReport, note } from './validation-report.js';
import { sequenceSplit, type ClipSummary } from './sequence-split.js';
import { orderedPrefetch } from './ordered-prefetch.js';

export interface ImportLimits {
  maxImageBytes: number;
  /** Frames per transaction (and per progress update). */
  batch: number;
  /** Frames whose files are read ahead of the one being checked. */
  readAhead: number;
}

type ReadImage = { ok: true; bytes: Buffer; width: number; height: number } | { ok: false; problem: 'empty' | 'corrupt'; why: string };
interface LoadedFrame {
  source: SourceFrame;
  image: ReadImage;
  twin?: ReadImage;
}

/**
 * Streams a dataset tree into the store: each frame's files are read (a few frames ahead), its image
 * checked (empty, corrupt, duplicate), its boxes mapped to the ontology's ids (unknown names counted)
 * and clamped (counted), frames written in batches with the progress; then the clips are split.
 * Nothing is dropped without being counted in the report.
 */
export async function importDataset(
  name: string,
  reader: FormatReader,
  storage: DatasetStorage,
  uri: string,
  store: DatasetStore,
  limits: ImportLimits,
  signal?: AbortSignal,
): Promise<ValidationReport> {
  const options = store.options(name);
  const ids = new Map(options.classes.map((c, i) => [c, i]));
  const report = emptyReport();
  const seen = new Map<string, string>();
  const clips = new Map<string, { frames: number; classes: Set<number> }>();
  let batch: FrameRow[] = [];
  let nextId = 1;
  const flush = async () => {
    store.insertFrames(name, batch);
    batch = [];
    store.progress(name, 'reading', report.frames_seen, reader.count);
    // Status polls and other requests are answered between batches.
    await yieldToLoop();
  };
  const load = async (loadSource: () => Promise<SourceFrame>): Promise<LoadedFrame> => {
    signal?.throwIfAborted();
    const source = await loadSource();
    const image = await readImage(storage, uri, source.image, limits.maxImageBytes);
    const twin = options.thermal && source.thermal !== undefined && image.ok ? await readImage(storage, uri, source.thermal, limits.maxImageBytes) : undefined;
    return { source, image, ...(twin ? { twin } : {}) };
  };
  for await (const loaded of orderedPrefetch(reader.frames(), limits.readAhead, load)) {
    signal?.throwIfAborted();
    report.frames_seen++;
    const frame = checkFrame(loaded, report, seen, ids, options.thermal);
    if (frame) {
      frame.id = nextId++;
      batch.push(frame);
      const clip = clips.get(frame.clip) ?? { frames: 0, classes: new Set<number>() };
      clip.frames++;
      for (const b of frame.boxes) clip.classes.add(b.class_id);
      clips.set(frame.clip, clip);
    }
    if (batch.length >= limits.batch) await flush();
  }
  await flush();
  for (const o of reader.orphans()) note(report.orphan_labels, o);
  store.progress(name, 'splitting', report.frames_seen, reader.count);
  const summaries: ClipSummary[] = [...clips].map(([clip, c]) => ({ clip, ...c }));
  const { assignment, tooFewClips } = sequenceSplit(summaries, { ratios: options.split, seed: options.split.seed });
  report.classes_in_too_few_clips = tooFewClips.map((k) => options.classes[k]);
  store.applySplit(name, assignment, reader.format === 'yolov8' && !options.resplit);
  return report;
}

function checkFrame(
  { source, image, twin }: LoadedFrame,
  report: ValidationReport,
  seen: Map<string, string>,
  ids: Map<string, number>,
  thermalWanted: boolean,
): FrameRow | undefined {
  if (!image.ok) {
    if (image.problem === 'empty') note(report.empty_images, source.image);
    else note(report.corrupt_images, { image: source.image, why: image.why });
    return undefined;
  }
  // Asked for pairs, a frame comes with its thermal twin or not at all: training reads them together.
  if (thermalWanted) {
    if (source.thermal === undefined || !twin) {
      note(report.thermal_unpaired, source.image);
      return undefined;
    }
    if (!twin.ok) {
      if (twin.problem === 'empty') note(report.empty_images, source.thermal);
      else note(report.corrupt_images, { image: source.thermal, why: twin.why });
      return undefined;
    }
  }
  const sha256 = createHash('sha256').update(image.bytes).digest('hex');
  const first = seen.get(sha256);
  if (first !== undefined) {
    note(report.duplicate_frames, { image: source.image, duplicate_of: first });
    return undefined;
  }
  seen.set(sha256, source.image);
  const boxes: FrameRow['boxes'] = [];
  report.label_lines_malformed += source.malformedLines;
  for (const raw of source.boxes) {
    const b = source.pixelBoxes ? fromPixels(raw, source.pixelBoxes.width ?? image.width, source.pixelBoxes.height ?? image.height) : raw;
    const id = ids.get(b.className);
    if (id === undefined) {
      report.unknown_classes[b.className] = (report.unknown_classes[b.className] ?? 0) + 1;
      continue;
    }
    const { box, clamped } = clampBox(b);
    if (!box) {
      report.boxes_degenerate++;
      continue;
    }
    if (clamped) report.boxes_clamped++;
    boxes.push({ class_id: id, ...box });
  }
  if (boxes.length === 0) report.frames_unlabelled++;
  report.frames_imported++;
  report.boxes_imported += boxes.length;
  const thermal = thermalWanted ? (source.thermal ?? null) : null;
  return {
    id: 0,
    image: source.image,
    thermal,
    clip: source.clip,
    source_split: source.sourceSplit ?? null,
    width: image.width,
    height: image.height,
    sha256,
    boxes,
  };
}

async function readImage(storage: DatasetStorage, uri: string, path: string, maxBytes: number): Promise<ReadImage> {
  let bytes: Buffer;
  try {
    bytes = await storage.read(uri, path, maxBytes);
  } catch (err) {
    if (isLookoutError(err, 'dataset.file_too_large') || isLookoutError(err, 'dataset.path_not_found'))
      return { ok: false, problem: 'corrupt', why: err.message };
    throw err;
  }
  const check = checkImage(bytes);
  return check.ok ? { ok: true, bytes, width: check.width, height: check.height } : check;
}
