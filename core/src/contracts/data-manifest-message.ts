import { z } from 'zod';
import { NonNegativeIntSchema, TimestampSchema } from './common.js';
import { ManifestChunkSchema } from './recording-chunk.js';

/** `devices/<device_id>/data_manifest`, on boot and on request: the recording index. */
export const DataManifestMessageSchema = z
  .looseObject({
    timestamp: TimestampSchema,
    chunks: z.array(ManifestChunkSchema),
    total_chunks: NonNegativeIntSchema.optional().describe('chunks on the device; chunks may list only recent ones'),
    reason: z.string().optional().describe('boot or request'),
  })
  .describe('data_manifest message (spec 01)');
/** A data_manifest message as parsed (see DataManifestMessageSchema). */
export type DataManifestMessage = z.infer<typeof DataManifestMessageSchema>;
