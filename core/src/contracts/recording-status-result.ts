import { z } from 'zod';
import { NonNegativeIntSchema, PercentSchema, StorageHealthSchema } from './common.js';
import { ChunkRefSchema } from './recording-chunk.js';

/** Result of the device tool `get_recording_status` (spec 01). */
export const RecordingStatusResultSchema = z
  .looseObject({
    total_chunks: NonNegativeIntSchema,
    inventory_count: NonNegativeIntSchema,
    storage_health: StorageHealthSchema,
    storage_free_gb: z.number().nonnegative(),
    storage_used_pct: PercentSchema,
    latest_chunk: ChunkRefSchema.nullable().describe('null before the first chunk'),
    is_writing_data: z.boolean(),
    recommendation: z.string().describe('text advice, e.g. when recording is stalled; may be empty'),
  })
  .describe('get_recording_status result (spec 01)');
/** A `get_recording_status` result as parsed (see RecordingStatusResultSchema). */
export type RecordingStatusResult = z.infer<typeof RecordingStatusResultSchema>;
