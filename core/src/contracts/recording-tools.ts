import { z } from 'zod';
import { NonNegativeIntSchema, TimestampSchema } from './common.js';
import { ChunkNameSchema, ChunkSidecarSchema, ClassSummarySchema } from './recording-chunk.js';

/** `list_recording_chunks` arguments: newest first, paged. */
export const ListRecordingChunksArgsSchema = z.strictObject({
  limit: z.number().int().min(1).max(200).default(20),
  offset: z.number().int().min(0).max(1_000_000).default(0),
  justified: z.boolean().optional().describe('only justified (true) or only unjustified (false) chunks'),
});

/** `list_recording_chunks` result; `source` says who answered (the hub marks an SSH discovery). */
export const ListRecordingChunksResultSchema = z.looseObject({
  chunks: z.array(ChunkSidecarSchema.partial().extend({ name: ChunkNameSchema, size_bytes: NonNegativeIntSchema })),
  total_count: NonNegativeIntSchema.describe('complete chunks matching the filter'),
  next_offset: NonNegativeIntSchema.nullable(),
  source: z.enum(['device', 'ssh_sftp', 'ssh_listing']).describe('device: the tool itself; ssh_*: the hub discovered the chunks over SSH'),
});
/** A `list_recording_chunks` result as parsed (see ListRecordingChunksResultSchema). */
export type ListRecordingChunksResult = z.infer<typeof ListRecordingChunksResultSchema>;

/** Width bounds of a live JPEG: wide enough for a preview, small enough for one tool answer. */
export const LIVE_JPEG_LIMITS = { minWidth: 16, maxWidth: 1920, defaultWidth: 640, minQuality: 1, maxQuality: 100, defaultQuality: 80 } as const;

/** `get_live_jpeg` arguments: width `w` and JPEG quality `q`, bounded by LIVE_JPEG_LIMITS, with defaults. */
export const LiveJpegArgsSchema = z.strictObject({
  w: z.number().int().min(LIVE_JPEG_LIMITS.minWidth).max(LIVE_JPEG_LIMITS.maxWidth).default(LIVE_JPEG_LIMITS.defaultWidth).describe('width in pixels'),
  q: z.number().int().min(LIVE_JPEG_LIMITS.minQuality).max(LIVE_JPEG_LIMITS.maxQuality).default(LIVE_JPEG_LIMITS.defaultQuality).describe('JPEG quality 1-100'),
});

/** `get_live_jpeg` result: the newest frame of the live stream as base64 JPEG, with its size and capture time. */
export const LiveJpegResultSchema = z.looseObject({
  content_type: z.literal('image/jpeg'),
  jpeg_base64: z.string().min(1),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  bytes: z.number().int().positive(),
  captured_at: TimestampSchema.describe('capture time of the frame'),
});
/** A `get_live_jpeg` result as parsed (see LiveJpegResultSchema). */
export type LiveJpegResult = z.infer<typeof LiveJpegResultSchema>;

/** `video_understand`: a clip by chunk name or by time range. */
export const VideoUnderstandArgsSchema = z
  .strictObject({
    chunk: ChunkNameSchema.optional(),
    start: TimestampSchema.optional(),
    end: TimestampSchema.optional(),
    describe: z.boolean().default(true).describe('ask the configured describer for a description too'),
  })
  .refine((a) => a.chunk !== undefined || (a.start !== undefined && a.end !== undefined), 'give chunk, or start and end')
  .meta({ anyOf: [{ required: ['chunk'] }, { required: ['start', 'end'] }] });

/** `video_understand` result (spec 01 device tools): counts from the clip's chunk sidecars, and a description when a describer is configured. */
export const VideoUnderstandResultSchema = z.looseObject({
  start: TimestampSchema,
  end: TimestampSchema,
  chunks: z.array(ChunkNameSchema),
  frames_with_detections: NonNegativeIntSchema,
  person_max_count: NonNegativeIntSchema,
  classes: z.record(z.string(), ClassSummarySchema),
  track_ids: z.array(NonNegativeIntSchema),
  track_count: NonNegativeIntSchema,
  description: z.string().nullable().describe('from the describer; never changes a count'),
  description_reason: z.string().nullable().describe('why there is no description (no describer configured, describer failed)'),
});
/** A `video_understand` result as parsed (see VideoUnderstandResultSchema). */
export type VideoUnderstandResult = z.infer<typeof VideoUnderstandResultSchema>;
