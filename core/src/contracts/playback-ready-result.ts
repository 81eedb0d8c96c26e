import { z } from 'zod';
import { NonNegativeIntSchema } from './common.js';
import { ChunkRefSchema } from './recording-chunk.js';

/** A playable chunk: its justified metadata and the URL of its mp4 (transcoded or cached). */
export const PlaybackChunkSchema = ChunkRefSchema.extend({
  justified: z.boolean(),
  playUrl: z.string().min(1),
  duration_s: z.number().positive().optional(),
  keyframe_count: NonNegativeIntSchema.optional(),
  rfdetr_stride_fps: z.number().nonnegative().optional(),
});
export type PlaybackChunk = z.infer<typeof PlaybackChunkSchema>;

/** `GET /fleet/playback-ready` (spec 01). */
export const PlaybackReadyResultSchema = z
  .looseObject({
    recent_chunks: z.array(PlaybackChunkSchema),
    count: NonNegativeIntSchema,
  })
  .describe('GET /fleet/playback-ready answer');
export type PlaybackReadyResult = z.infer<typeof PlaybackReadyResultSchema>;
