import { z } from 'lookout/core';

const flag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

/**
 * Keys of the recorder. CHUNK_SECONDS and the storage thresholds are the spec's; STORAGE_WARN_PCT and
 * STORAGE_CRITICAL_PCT mean what they mean to system-health (the same keys, read by both), so the
 * recorder prunes at the CRITICAL that health reports.
 */
export const RecorderConfigSchema = z
  .object({
    RECORDINGS_DIR: z.string().min(1).optional().describe('recordings folder; default /data/ext-recordings when it exists, else /data/recordings'),
    CHUNK_SECONDS: z.coerce.number().min(0.2).max(3600).default(60).describe('a chunk is cut on the first keyframe after this much video'),
    KEEP_CHUNKS: z.coerce.number().int().min(1).max(1_000_000).default(30).describe('chunks a prune keeps'),
    AUTO_PRUNE: flag
      .default(true)
      .describe(
        'prune by itself when storage turns CRITICAL: to KEEP_CHUNKS, then only unjustified chunks (never the newest two) until it is back to WARNING or a removal frees nothing',
      ),
    STORAGE_WARN_PCT: z.coerce.number().min(0).max(100).default(80),
    STORAGE_CRITICAL_PCT: z.coerce.number().min(0).max(100).default(95),
    STORAGE_CHECK_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000).describe('how often storage is measured (and pruned at CRITICAL)'),
    STATUS_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(5000).describe('how often .h265_status is rewritten between chunks'),
    MANIFEST_ENTRIES: z.coerce.number().int().min(1).max(10_000).default(50).describe('chunks in recent_manifest.jsonl'),
    DATA_MANIFEST_CHUNKS: z.coerce.number().int().min(1).max(200).default(30).describe('newest chunks a data_manifest message lists'),
    JUSTIFY_PERSON_CONFIDENCE: z.coerce.number().min(0).max(1).default(0.35).describe('a person at or over this confidence justifies a chunk'),
    JUSTIFY_WEAPON_CONFIDENCE: z.coerce
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe('a weapon class (gun, knife, rifle, shotgun) at or over this confidence justifies a chunk'),
    RECORDER_MAX_QUEUED_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .default(32 * 1024 * 1024)
      .describe(
        'pictures waiting for the disk at most; past it pictures are dropped, the chunk in progress is abandoned and recording resumes on the next keyframe',
      ),
    RECORDING_STALL_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000).describe('no picture written for this long: recording is stalled'),
    VIDEO_DESCRIBER_URL: z.url().optional().describe('OpenAI-compatible chat completions API base (POST <url>/chat/completions); none: no descriptions'),
    VIDEO_DESCRIBER_MODEL: z.string().min(1).default('default').describe('model name sent to the describer'),
    VIDEO_DESCRIBER_API_KEY: z.string().min(1).optional().describe('bearer token of the describer, if it wants one'),
    VIDEO_DESCRIBER_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(20_000),
  })
  .superRefine((c, issues) => {
    if (c.STORAGE_WARN_PCT > c.STORAGE_CRITICAL_PCT) {
      issues.addIssue({ code: 'custom', path: ['STORAGE_WARN_PCT'], message: `must not exceed STORAGE_CRITICAL_PCT (${c.STORAGE_CRITICAL_PCT})` });
    }
  });
export type RecorderConfig = z.output<typeof RecorderConfigSchema>;
