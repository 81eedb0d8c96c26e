import { z } from 'zod';
import { NonNegativeIntSchema, TimestampSchema } from './common.js';

/** A reference to one recording chunk (about 60 s of H.265), e.g. `latest_chunk`. */
export const ChunkRefSchema = z
  .looseObject({
    name: z.string().min(1).describe('file name of the chunk'),
    path: z.string().min(1).optional().describe('path on the device'),
    started_at: TimestampSchema.optional(),
    size_bytes: NonNegativeIntSchema.optional(),
  })
  .describe('reference to a recording chunk');
export type ChunkRef = z.infer<typeof ChunkRefSchema>;

/** One entry of the chunk index (data_manifest, recent_manifest.jsonl): a chunk with its sidecar fields. */
export const ManifestChunkSchema = ChunkRefSchema.extend({
  started_at: TimestampSchema,
  duration_s: z.number().positive().describe('about 60'),
  keyframe_count: NonNegativeIntSchema,
  justified: z.boolean(),
  rfdetr_stride_fps: z.number().nonnegative().describe('detector stride while recorded; 0 without detection'),
}).describe('chunk index entry with sidecar fields');
export type ManifestChunk = z.infer<typeof ManifestChunkSchema>;
