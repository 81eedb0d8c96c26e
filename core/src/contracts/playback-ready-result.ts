import { z } from 'zod';
import { NonNegativeIntSchema, TimestampSchema } from './common.js';
import { ChunkRefSchema } from './recording-chunk.js';

/** A playable chunk: its justified metadata and the URLs of its mp4 (H.264 transcode, HEVC remux). */
export const PlaybackChunkSchema = ChunkRefSchema.extend({
  device_id: z.string().min(1).optional(),
  justified: z.boolean(),
  playUrl: z.string().min(1).describe('H.264 mp4 (faststart) that every browser plays, transcoded once into the hub cache'),
  playUrlHevc: z.string().min(1).optional().describe('the H.265 original remuxed into an hvc1 mp4: no transcode, for clients that decode H.265'),
  duration_s: z.number().positive().optional().describe('video length: pictures over the frame rate'),
  ended_at: TimestampSchema.optional().describe(
    'real-time end (the last picture plus one frame); later than started_at + duration_s when the device dropped pictures',
  ),
  keyframe_count: NonNegativeIntSchema.optional(),
  rfdetr_stride_fps: z.number().nonnegative().optional(),
  source: z.string().optional().describe('where the hub found the chunk: cache (data_manifest), device, local, ssh_sftp, ssh_listing'),
});
/** A playback-ready chunk as parsed (see PlaybackChunkSchema). */
export type PlaybackChunk = z.infer<typeof PlaybackChunkSchema>;

/** `GET /fleet/playback-ready` (spec 01). */
export const PlaybackReadyResultSchema = z
  .looseObject({
    recent_chunks: z.array(PlaybackChunkSchema),
    count: NonNegativeIntSchema,
  })
  .describe('GET /fleet/playback-ready answer');
/** A `GET /fleet/playback-ready` answer as parsed (see PlaybackReadyResultSchema). */
export type PlaybackReadyResult = z.infer<typeof PlaybackReadyResultSchema>;
