import { z } from 'zod';
import { NonNegativeIntSchema, TimestampSchema } from './common.js';

/**
 * A chunk's file name: one path segment ending in `.h265` (`<UTC stamp>_<seq>.h265` as the recorder
 * writes them). Names come back from devices and from requests, so the pattern is what keeps a name
 * from being a path: no separators, no leading dot, no `..`.
 */
export const CHUNK_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*\.h265$/;
/** Validates a chunk file name against CHUNK_NAME_PATTERN (at most 128 characters). */
export const ChunkNameSchema = z
  .string()
  .max(128)
  .regex(CHUNK_NAME_PATTERN, 'a chunk file name: letters, digits, _ - and single dots, ending in .h265')
  .describe('file name of a recording chunk');

/** The sidecar written beside a chunk: `<chunk name without .h265>.json`. */
export function sidecarNameOf(chunkName: string): string {
  return chunkName.replace(/\.h265$/, '.json');
}

/** A reference to one recording chunk (about 60 s of H.265), e.g. `latest_chunk`. */
export const ChunkRefSchema = z
  .looseObject({
    name: z.string().min(1).describe('file name of the chunk'),
    path: z.string().min(1).optional().describe('path on the device'),
    started_at: TimestampSchema.optional(),
    size_bytes: NonNegativeIntSchema.optional(),
  })
  .describe('reference to a recording chunk');
/** A chunk reference as parsed (see ChunkRefSchema). */
export type ChunkRef = z.infer<typeof ChunkRefSchema>;

/** One entry of the chunk index (data_manifest, recent_manifest.jsonl): a chunk with its sidecar fields. */
export const ManifestChunkSchema = ChunkRefSchema.extend({
  started_at: TimestampSchema,
  duration_s: z.number().positive().describe('about 60'),
  keyframe_count: NonNegativeIntSchema,
  justified: z.boolean(),
  rfdetr_stride_fps: z.number().nonnegative().describe('detector stride while recorded; 0 without detection'),
}).describe('chunk index entry with sidecar fields');
/** A chunk index entry as parsed (see ManifestChunkSchema). */
export type ManifestChunk = z.infer<typeof ManifestChunkSchema>;

/** Per production class id (as a string key): the most seen in one frame and the highest confidence. */
export const ClassSummarySchema = z.looseObject({
  label: z.string(),
  max_count: NonNegativeIntSchema,
  max_confidence: z.number().min(0).max(1),
});

/** What the detector saw while a chunk was recorded. */
export const DetectionSummarySchema = z
  .looseObject({
    frames_with_detections: NonNegativeIntSchema,
    person_max_count: NonNegativeIntSchema,
    classes: z.record(z.string(), ClassSummarySchema).describe('keyed by production class id'),
    track_ids: z.array(NonNegativeIntSchema).describe('tracker ids seen, ascending'),
  })
  .describe('detection summary of a chunk');
/** A chunk's detection summary as parsed (see DetectionSummarySchema). */
export type DetectionSummary = z.infer<typeof DetectionSummarySchema>;

/**
 * A chunk's sidecar (`<name>.json`), also one line of `recent_manifest.jsonl` and one entry of
 * data_manifest and list_recording_chunks. `name` is a file name, never a path.
 */
export const ChunkSidecarSchema = ManifestChunkSchema.extend({
  name: ChunkNameSchema,
  version: z.literal(1),
  ended_at: TimestampSchema,
  frame_count: NonNegativeIntSchema,
  fps: z.number().positive().describe('frames per second of the stream (a raw H.265 stream carries no timestamps)'),
  size_bytes: NonNegativeIntSchema,
  codec: z.literal('hevc'),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  justified_reason: z.string().nullable().describe('why the chunk is justified (person over the gate, weapon class), null when not'),
  detections: DetectionSummarySchema,
  recovered: z.boolean().optional().describe('rebuilt at start from a chunk left incomplete by a crash'),
}).describe('recording chunk sidecar');
/** A chunk sidecar as parsed (see ChunkSidecarSchema). */
export type ChunkSidecar = z.infer<typeof ChunkSidecarSchema>;
