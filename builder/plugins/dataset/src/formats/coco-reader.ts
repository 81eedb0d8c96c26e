import { posix } from 'node:path';
import { LookoutError, z } from 'lookout/core';
import { clipOf } from './clip-of.js';
import { listTree, twinOf } from './tree-listing.js';
import type { FormatReader, SourceBox, SourceFrame } from './source-frame.js';
import type { TreeReadOptions } from './yolo-reader.js';

const CocoSchema = z.object({
  images: z.array(
    z.looseObject({
      id: z.union([z.number(), z.string()]),
      file_name: z.string().min(1),
      width: z.number().positive().optional(),
      height: z.number().positive().optional(),
      video_id: z.union([z.number(), z.string()]).optional(),
    }),
  ),
  annotations: z.array(
    z.looseObject({
      image_id: z.union([z.number(), z.string()]),
      category_id: z.union([z.number(), z.string()]),
      bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]),
    }),
  ),
  categories: z.array(z.looseObject({ id: z.union([z.number(), z.string()]), name: z.string().min(1) })),
});

const JSON_NAMES = ['annotations.json', 'instances.json', '_annotations.coco.json', 'annotations/instances.json'];

/**
 * COCO detection JSON (images, annotations with pixel `[x, y, w, h]` boxes, categories), converted to
 * YOLO's normalised centre boxes with each image's width and height. The URI names the JSON file or a
 * tree holding one; `file_name` is relative to the JSON's folder or its images/ folder. A `video_id`
 * groups frames into a clip; otherwise the file name does.
 */
export async function cocoReader(o: TreeReadOptions & { maxJsonBytes: number }): Promise<FormatReader> {
  const isFile = await o.storage.isFile(o.uri);
  const files = await listTree(o.storage, o.uri, o.maxFiles);
  const jsonPath = isFile ? posix.basename(o.uri) : JSON_NAMES.find((n) => files.has(n));
  if (!jsonPath) throw invalid(o.uri, `no COCO JSON (name the file, or put one of ${JSON_NAMES.join(', ')} at the tree's root)`);
  let parsed: z.output<typeof CocoSchema>;
  try {
    const result = CocoSchema.safeParse(JSON.parse((await o.storage.read(o.uri, jsonPath, o.maxJsonBytes)).toString('utf8')));
    if (!result.success) {
      const issue = result.error.issues[0];
      throw invalid(o.uri, `${jsonPath}: ${issue.path.join('.')}: ${issue.message}`);
    }
    parsed = result.data;
  } catch (err) {
    if (err instanceof LookoutError) throw err;
    throw invalid(o.uri, `${jsonPath} is not JSON: ${(err as Error).message}`);
  }
  const categories = new Map(parsed.categories.map((c) => [String(c.id), c.name]));
  const byImage = new Map<string, SourceBox[]>();
  for (const a of parsed.annotations) {
    const boxes = byImage.get(String(a.image_id)) ?? [];
    boxes.push({ className: categories.get(String(a.category_id)) ?? `#${a.category_id}`, cx: a.bbox[0], cy: a.bbox[1], w: a.bbox[2], h: a.bbox[3] });
    byImage.set(String(a.image_id), boxes);
  }
  return {
    format: 'coco',
    count: parsed.images.length,
    *frames(): Iterable<() => Promise<SourceFrame>> {
      for (const image of parsed.images) {
        const name = image.file_name.replace(/^\.\//, '');
        const path = files.has(name) ? name : `images/${name}`;
        const boxes = (byImage.get(String(image.id)) ?? []).map((b) => ({ ...b }));
        const thermal = o.thermal ? twinOf(files, 'thermal', name) : undefined;
        const frame: SourceFrame = {
          image: path,
          clip: image.video_id !== undefined ? `video-${image.video_id}` : clipOf(name),
          boxes,
          malformedLines: 0,
          // Pixel boxes: the import normalises them with the JSON's size, or the image's own when the JSON has none.
          pixelBoxes: { ...(image.width && image.height ? { width: image.width, height: image.height } : {}) },
          ...(thermal ? { thermal } : {}),
        };
        yield () => Promise.resolve(frame);
      }
    },
    orphans: () => [],
  };
}

function invalid(uri: string, why: string): LookoutError {
  return new LookoutError('dataset.format_invalid', `${uri}: ${why}`, { details: { uri } });
}
