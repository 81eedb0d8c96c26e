import { z } from 'zod';
import { DeviceIdSchema } from 'lookout/core/contracts';

export const TRANSFER_STATES = ['queued', 'running', 'done', 'failed', 'cancelled'] as const;
export type TransferState = (typeof TRANSFER_STATES)[number];
/** States a transfer leaves only when asked (retry) or evicted. */
export const FINISHED_STATES: readonly TransferState[] = ['done', 'failed', 'cancelled'];

/** pull: a recording chunk from its device into the hub; upload: a pulled chunk from the hub to a configured destination (tus). */
export const TRANSFER_KINDS = ['pull', 'upload'] as const;
export type TransferKind = (typeof TRANSFER_KINDS)[number];

/** Who asked for a transfer: an operator (POST /fleet/transfers), GET /pull-recording, an incident, a clip build. */
export const TRANSFER_ORIGINS = ['api', 'pull-recording', 'incident', 'clip'] as const;
export type TransferOrigin = (typeof TRANSFER_ORIGINS)[number];

const ErrorSchema = z.object({ code: z.string(), message: z.string() });

/** One transfer as routes answer it and the hub state keeps it (snake_case, as every answer of the hub). */
export const TransferSchema = z.object({
  id: z.string().describe('t-<random hex>'),
  kind: z.enum(TRANSFER_KINDS).describe('pull: a recording chunk from its device into the hub; upload: a pulled chunk from the hub to a destination (tus)'),
  device_id: DeviceIdSchema,
  chunk: z.string().describe('the recording file name on the device'),
  origin: z.enum(TRANSFER_ORIGINS),
  state: z.enum(TRANSFER_STATES),
  attempts: z.number().int().describe('attempts started so far (a resume after a restart is one more)'),
  max_attempts: z.number().int(),
  bytes_done: z.number().int().describe('bytes on the hub so far (a resumed pull starts from what it had); of an upload, bytes the destination holds'),
  bytes_total: z.number().int().nullable().describe('the size the device announced (of an upload: the file’s), null before it was known'),
  rate_bps: z.number().nullable().describe('bytes per second over the last seconds of a running transfer'),
  resumed_from: z.number().int().nullable().describe('the offset the latest attempt started from, when it resumed a partial pull (or upload)'),
  source: z.string().nullable().describe('where the bytes came from: device (its GET /recordings with Range), local, sftp; of an upload, the protocol: tus'),
  error: ErrorSchema.nullable().describe('why the last attempt failed (a failed transfer: why it gave up)'),
  next_attempt_at: z.string().nullable().describe('when a failed attempt is tried again (exponential backoff)'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
  updated_at: z.string(),
  /** The device's ETag of the partial file: a resume asks for the rest only if the file is the same (If-Range). */
  etag: z.string().nullable().describe("the device's ETag of the file, sent as If-Range on a resume"),
  stored: z.boolean().describe('the pulled file is held by the hub (a clip build takes its pull away once done); an upload holds its file until it is done'),
  // Upload fields: defaulted so that a queue saved before uploads existed loads.
  upload_of: z.string().nullable().default(null).describe('of an upload: the done pull whose file it sends'),
  destination: z.string().nullable().default(null).describe('of an upload: the tus creation URL it sends to (a configured one)'),
  upload_url: z
    .string()
    .nullable()
    .default(null)
    .describe('of an upload: its URL at the destination once created; a retry resumes there from the destination’s offset'),
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
  max_bytes: z
    .number()
    .int()
    .describe('bytes the transfers folder may hold; past it the oldest finished transfers lose their files (LOOKOUT_TRANSFERS_MAX_BYTES)'),
});

export const TransferListResponse = z.object({
  transfers: z.array(TransferSchema),
  counts: z.record(z.enum(TRANSFER_STATES), z.number().int()).describe('transfers per state (all, not only those listed)'),
  limits: TransferLimitsSchema,
  puller: z.boolean().describe('a plugin pulls recordings (media); without one, transfers wait queued'),
});

export const EnqueueBody = z
  .object({
    kind: z.enum(TRANSFER_KINDS).default('pull').describe('pull (default): device and chunks; upload: transfers (done pulls) and an optional destination'),
    device: z.string().min(1).max(256).optional().describe('of a pull: device id, address or label, as POST /tools/call takes'),
    chunks: z
      .array(z.string().min(1).max(255))
      .min(1)
      .max(100)
      .optional()
      .describe('of a pull: recording file names on the device (list_recording_chunks names them)'),
    transfers: z.array(z.string().min(1).max(80)).min(1).max(100).optional().describe('of an upload: done pulls (t-…) whose files are sent'),
    destination: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe(
        'of an upload: a tus creation URL under one of the configured prefixes (LOOKOUT_TRANSFERS_UPLOAD_PREFIXES); default LOOKOUT_TRANSFERS_UPLOAD_URL',
      ),
  })
  .strict()
  .superRefine((b, ctx) => {
    const need = b.kind === 'pull' ? (['device', 'chunks'] as const) : (['transfers'] as const);
    const other = b.kind === 'pull' ? (['transfers', 'destination'] as const) : (['device', 'chunks'] as const);
    for (const f of need) if (b[f] === undefined) ctx.addIssue({ code: 'custom', path: [f], message: `Required (a ${b.kind})` });
    for (const f of other) if (b[f] !== undefined) ctx.addIssue({ code: 'custom', path: [f], message: `not a field of a ${b.kind}` });
  });

export const EnqueueResponse = z.object({ transfers: z.array(TransferSchema) });
