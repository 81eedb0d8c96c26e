import {
  ListRecordingChunksArgsSchema,
  ListRecordingChunksResultSchema,
  RecordingStatusResultSchema,
  VideoUnderstandArgsSchema,
  VideoUnderstandResultSchema,
} from 'lookout/core/contracts';
import { z, type PluginTools } from 'lookout/core';
import type { ChunkIndex } from './chunk-index.js';
import type { StorageWatch } from './storage-watch.js';
import type { RecorderConfig } from './config.js';
import { recordingStatus, type RecordingStatusParts } from './recording-status.js';
import { videoUnderstand, type UnderstandDeps } from './video-understand.js';

/** The recorder's tools as its manifest declares them. */
export const RECORDER_TOOLS = [
  {
    name: 'get_recording_status',
    readOnly: true,
    description:
      'Recording status: total_chunks, inventory_count, storage_health (OK, WARNING, CRITICAL), storage_free_gb, storage_used_pct, latest_chunk, is_writing_data and a recommendation (empty when recording is fine)',
    input: z.object({}),
    output: RecordingStatusResultSchema,
  },
  {
    name: 'list_recording_chunks',
    readOnly: true,
    description: 'Complete recording chunks with their sidecar fields, newest first, paged (limit, offset); justified filters justified or unjustified ones',
    input: ListRecordingChunksArgsSchema,
    output: ListRecordingChunksResultSchema,
  },
  {
    name: 'prune_recordings',
    description:
      'Prunes the recordings now as the prune at CRITICAL does (whatever AUTO_PRUNE says): down to KEEP_CHUNKS, unjustified oldest first; below it, while the volume stays CRITICAL, unjustified chunks but never the newest two. Answers what went and the storage health after',
    input: z.object({}),
    output: z
      .object({
        removed: z.array(z.object({ name: z.string(), justified: z.boolean(), size_bytes: z.number() })),
        freed_bytes: z.number(),
        kept_chunks: z.number(),
        still_critical: z.boolean(),
        storage_health: z.string().nullable(),
      })
      .loose(),
  },
  {
    name: 'video_understand',
    readOnly: true,
    description:
      "A clip (chunk, or start and end) from the device's detection logs: counts, classes and track ids; plus a description from the configured describer (VIDEO_DESCRIBER_URL), which never changes a count",
    input: VideoUnderstandArgsSchema,
    output: VideoUnderstandResultSchema,
  },
];

/** video_understand's describer, when VIDEO_DESCRIBER_URL names one. */
export function describerOf(config: RecorderConfig): UnderstandDeps['describer'] {
  return config.VIDEO_DESCRIBER_URL
    ? {
        url: config.VIDEO_DESCRIBER_URL,
        model: config.VIDEO_DESCRIBER_MODEL,
        timeoutMs: config.VIDEO_DESCRIBER_TIMEOUT_MS,
        ...(config.VIDEO_DESCRIBER_API_KEY ? { apiKey: config.VIDEO_DESCRIBER_API_KEY } : {}),
      }
    : undefined;
}

/** Complete chunks newest first, filtered by justified, one page of them. */
export function listRecordingChunks(index: ChunkIndex, args: z.output<typeof ListRecordingChunksArgsSchema>) {
  const matching = [...index.all()].reverse().filter((c) => args.justified === undefined || c.justified === args.justified);
  const page = matching.slice(args.offset, args.offset + args.limit);
  const next = args.offset + page.length;
  return { chunks: page, total_count: matching.length, next_offset: next < matching.length ? next : null, source: 'device' as const };
}

/** Registers the handlers of RECORDER_TOOLS. */
export function registerRecorderTools(
  tools: PluginTools,
  status: RecordingStatusParts,
  understand: UnderstandDeps,
  prune: () => ReturnType<StorageWatch['pruneNow']>,
): void {
  tools.register('prune_recordings', () => prune());
  tools.register('get_recording_status', () => recordingStatus(status));
  tools.register('list_recording_chunks', async (args: z.output<typeof ListRecordingChunksArgsSchema>) => listRecordingChunks(status.index, args));
  tools.register('video_understand', async (args: z.output<typeof VideoUnderstandArgsSchema>, { signal }) => videoUnderstand(args, understand, signal));
}
