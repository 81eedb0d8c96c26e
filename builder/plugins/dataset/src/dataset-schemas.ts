import { z } from 'lookout/core';

export const DatasetName = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'a dataset name: lower-case letters, digits, _ . and -, at most 64');
const ratio = z.number().min(0).max(1);

export const ImportBody = z
  .object({
    name: DatasetName,
    uri: z.string().min(1).max(4096).describe('an absolute path or file:// URI inside a dataset root, gs://bucket/prefix or s3://bucket/prefix'),
    format: z.enum(['yolo', 'coco', 'yolov8']),
    ontology: z.string().min(1).max(64).default('default').describe('the ontology whose class names the boxes are mapped to'),
    class_names: z.array(z.string().min(1).max(64)).max(10_000).optional().describe('YOLO class names by index, when the tree has no classes.txt'),
    thermal: z
      .boolean()
      .default(false)
      .describe('pair each frame with its thermal twin (thermal/ mirrors images/); frames without one are left out and counted'),
    split: z
      .object({
        train: ratio.default(0.8),
        val: ratio.default(0.1),
        test: ratio.default(0.1),
        seed: z
          .number()
          .int()
          .min(0)
          .max(2 ** 32 - 1)
          .default(1),
      })
      .refine((s) => Math.abs(s.train + s.val + s.test - 1) < 1e-6, 'train, val and test add up to 1')
      .refine((s) => s.train > 0, 'train needs a share')
      .default({ train: 0.8, val: 0.1, test: 0.1, seed: 1 }),
    resplit: z.boolean().default(false).describe("YOLOv8: split again (sequence-aware) instead of keeping the export's splits"),
  })
  .strict();
export type ImportRequest = z.output<typeof ImportBody>;

const SplitCountsSchema = z.object({
  frames: z.number().int(),
  clips: z.number().int(),
  boxes: z.number().int(),
  classes: z.record(z.string(), z.number().int()),
});
const Examples = z.object({ count: z.number().int(), examples: z.array(z.unknown()) });

export const DatasetStatusSchema = z.object({
  name: z.string(),
  uri: z.string(),
  format: z.enum(['yolo', 'coco', 'yolov8']),
  ontology: z.string(),
  classes: z.array(z.string()),
  thermal: z.boolean(),
  state: z.enum(['IMPORTING', 'READY', 'FAILED']),
  reason: z.string().nullable(),
  progress: z.object({ phase: z.string().nullable(), done: z.number().int(), total: z.number().int() }),
  splits: z.object({ train: SplitCountsSchema, val: SplitCountsSchema, test: SplitCountsSchema }),
  class_counts: z.record(z.string(), z.object({ boxes: z.number().int(), frames: z.number().int(), clips: z.number().int() })),
  report: z
    .object({
      frames_seen: z.number().int(),
      frames_imported: z.number().int(),
      boxes_imported: z.number().int(),
      unknown_classes: z.record(z.string(), z.number().int()),
      boxes_clamped: z.number().int(),
      boxes_degenerate: z.number().int(),
      label_lines_malformed: z.number().int(),
      frames_unlabelled: z.number().int(),
      empty_images: Examples,
      corrupt_images: Examples,
      duplicate_frames: Examples,
      thermal_unpaired: Examples,
      orphan_labels: Examples,
      classes_in_too_few_clips: z.array(z.string()),
    })
    .nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

const Box = z.object({ class_id: z.number().int(), class: z.string(), cx: z.number(), cy: z.number(), w: z.number(), h: z.number() });
export const FramesSchema = z.object({
  frames: z.array(
    z.object({
      id: z.number().int(),
      image: z.string(),
      thermal: z.string().nullable(),
      clip: z.string(),
      split: z.enum(['train', 'val', 'test']).nullable(),
      source_split: z.string().nullable(),
      width: z.number().int(),
      height: z.number().int(),
      boxes: z.array(Box).describe('normalised YOLO boxes: centre and size in 0..1'),
    }),
  ),
});
export const FramesQuery = z.object({
  split: z.enum(['train', 'val', 'test']).optional(),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
