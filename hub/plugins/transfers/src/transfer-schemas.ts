import { z } from 'zod';
import { DeviceIdSchema } from 'lookout/core/contracts';

export const TRANSFER_STATES = ['queued', 'running', 'done', 'failed', 'cancelled'] as const;
export type TransferState = (typeof TRANSFER_STATES)[number];
/** States a transfer leaves only when asked (retry) or evicted. */
export const FINISHED_STATES: readonly TransferState[] = ['done', 'failed', 'cancelled'];

/** Who asked for a transfer: an operator (POST /fleet/transfers), GET /pull-recording, an incident, a clip build. */
export const TRANSFER_ORIGINS = ['api', 'pull-recording', 'incident', 'clip'] as const;
export type TransferOrigin = (typeof TRANSFER_ORIGINS)[number];

const ErrorSchema = z.object({ code: z.string(), message: z.string() });

/** One transfer as routes answer it and the hub state keeps it (snake_case, as every answer of the hub). */
export const TransferSchema = z.object({
  id: z.string().describe('t-<random hex>'),
  kind: z.literal('pull').describe('pull: a recording chunk from its device into the hub'),
  device_id: DeviceIdSchema,
  chunk: z.string().describe('the recording file name on the device'),
  origin: z.enum(TRANSFER_ORIGINS),
  state: z.enum(TRANSFER_STATES),
  attempts: z.number().int().describe('attempts started so far (a resume after a restart is one more)'),
  max_attempts: z.number().int(),
  bytes_done: z.number().int().describe('bytes on the hub so far (a resumed pull starts from what it had)'),
  bytes_total: z.number().int().nullable().describe('the size the device announced, null before it did'),
  rate_bps: z.number().nullable().describe('bytes per second over the last seconds of a running transfer'),
  resumed_from: z.number().int().nullable().describe('the offset the latest attempt started from, when it resumed a partial pull'),
  source: z.string().nullable().describe('where the bytes came from: device (its GET /recordings with Range), local, sftp'),
  error: ErrorSchema.nullable().describe('why the last attempt failed (a failed transfer: why it gave up)'),
  next_attempt_at: z.string().nullable().describe('when a failed attempt is tried again (exponential backoff)'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  updated_at: z.string(),
  /** The device's ETag of the partial file: a resume asks for the rest only if the file is the same (If-Range). */
  etag: z.string().nullable().describe("the device's ETag of the file, sent as If-Range on a resume"),
  stored: z.boolean().describe('the pulled file is held by the hub (a clip build takes its pull away once done)'),
});
export type Transfer = z.infer<typeof TransferSchema>;

export const TransferIdParams = { id: 'the transfer id (t-…)' };

export const TransferListQuery = z.object({
  state: z.enum(TRANSFER_STATES).optional().describe('only transfers in this state'),
  device: DeviceIdSchema.max(128).optional().describe('only transfers of this device'),
  limit: z.coerce.number().int().min(1).max(1000).default(200).describe('newest first, at most this many'),
});

export const TransferLimitsSchema = z.object({
  concurrency: z.number().int().describe('transfers running at once in all (LOOKOUT_TRANSFERS_CONCURRENCY)'),
  per_device: z.number().int().describe('transfers running at once per device (LOOKOUT_TRANSFERS_PER_DEVICE)'),
  max_attempts: z.number().int(),
  max_active: z.number().int().describe('queued and running transfers the hub holds at once; more are refused (device_busy)'),
});

export const TransferListResponse = z.object({
  transfers: z.array(TransferSchema),
  counts: z.record(z.enum(TRANSFER_STATES), z.number().int()).describe('transfers per state (all, not only those listed)'),
  limits: TransferLimitsSchema,
  puller: z.boolean().describe('a plugin pulls recordings (media); without one, transfers wait queued'),
});

export const EnqueueBody = z
  .object({
    device: z.string().min(1).max(256).describe('device id, address or label, as POST /tools/call takes'),
    chunks: z.array(z.string().min(1).max(255)).min(1).max(100).describe('recording file names on the device (list_recording_chunks names them)'),
  })
  .strict();

export const EnqueueResponse = z.object({ transfers: z.array(TransferSchema) });
