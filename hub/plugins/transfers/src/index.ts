import { join } from 'node:path';
import { z } from 'zod';
import { definePlugin, LookoutError, reply } from 'lookout/core';
import { HUB_STATE, type StateKeeper } from 'lookout/hub';
import { isRecordingFileName } from 'lookout/lib/storage';
import { DEBUG_RING } from '../../debug-ring/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { TRANSFERS } from './service.js';
import { FileTransferQueue, QueueSnapshotSchema } from './transfer-queue.js';
import { tusUpload } from './tus-upload.js';
import { UploadDestinations } from './upload-destinations.js';
import { EnqueueBody, EnqueueResponse, TransferIdParams, TransferListQuery, TransferListResponse, TransferSchema, type Transfer } from './transfer-schemas.js';

const STATE_KEY = 'transfers';

/**
 * The hub's transfer queue of recording pulls (`/fleet/transfers`): queued, running, done, failed
 * (with the reason), cancelled; progress (bytes, rate), retries with exponential backoff, resume of
 * a partial pull from its offset, bounded concurrency in all and per device, kept in the hub state
 * so that a restart resumes what ran. The media plugin installs the puller (its sources: the
 * device's GET /recordings with Range, a local folder, SFTP) and sends /pull-recording, clip builds
 * and incident pulls through it; other plugins enqueue through the TRANSFERS service.
 */
export default definePlugin({
  name: 'transfers',
  version: '1.0.0',
  core: '^1',
  description: 'The transfer queue of recording pulls (/fleet/transfers): progress, retry with backoff, resume, per-device and total concurrency, cancel',
  requires: [DEVICE_REGISTRY, DEBUG_RING],
  optionalRequires: [HUB_STATE],
  provides: [TRANSFERS],
  config: z.object({
    /** Transfers running at once in all. */
    LOOKOUT_TRANSFERS_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    /** Transfers running at once per device (a camera's uplink is small). */
    LOOKOUT_TRANSFERS_PER_DEVICE: z.coerce.number().int().min(1).max(16).default(2),
    /** Attempts of one transfer before it fails; each resumes from what the ones before brought. */
    LOOKOUT_TRANSFERS_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(4),
    /** The wait after the first failed attempt; it doubles after each (exponential backoff). */
    LOOKOUT_TRANSFERS_BACKOFF_MS: z.coerce.number().int().min(0).max(3_600_000).default(2000),
    LOOKOUT_TRANSFERS_BACKOFF_MAX_MS: z.coerce.number().int().min(0).max(86_400_000).default(60_000),
    /** Queued and running transfers held at once; more are refused with device_busy (429). */
    LOOKOUT_TRANSFERS_MAX_ACTIVE: z.coerce.number().int().min(1).max(100_000).default(1000),
    /** Finished transfers kept listed, with their pulled files; the oldest go first. */
    LOOKOUT_TRANSFERS_KEEP: z.coerce.number().int().min(0).max(100_000).default(200),
    /** The tus creation URL uploads go to when a request names no destination (POST /fleet/transfers, kind upload). */
    LOOKOUT_TRANSFERS_UPLOAD_URL: z.string().url().optional(),
    /** Comma-separated URL prefixes a request's own destination must fall under (besides LOOKOUT_TRANSFERS_UPLOAD_URL); no other host is ever uploaded to. */
    LOOKOUT_TRANSFERS_UPLOAD_PREFIXES: z
      .string()
      .optional()
      .transform((v) =>
        (v ?? '')
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p.length > 0),
      ),
    /** Bytes per PATCH of an upload: a destination that drops a cut request's bytes loses at most this much. */
    LOOKOUT_TRANSFERS_UPLOAD_CHUNK_BYTES: z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .default(8 * 1024 * 1024),
    /** Bytes the transfers folder may hold: past it, the files of the oldest finished transfers go (they stay listed). */
    LOOKOUT_TRANSFERS_MAX_BYTES: z.coerce
      .number()
      .int()
      .min(1024 * 1024)
      .default(20 * 1024 * 1024 * 1024),
    /** Where partial and pulled files are kept; default `<hub data dir>/transfers`. */
    LOOKOUT_TRANSFERS_DIR: z.string().min(1).optional(),
  }),
  errors: [
    { code: 'transfer_not_found', status: 404, description: 'no transfer of that id (finished ones are kept up to LOOKOUT_TRANSFERS_KEEP)' },
    {
      code: 'transfer_finished',
      status: 409,
      description: 'the transfer is finished: done cannot be cancelled or retried, failed or cancelled cannot be cancelled',
    },
    { code: 'transfer_not_done', status: 409, description: 'the transfer holds no pulled file (not done, or its file was taken)' },
    {
      code: 'upload_failed',
      status: 502,
      description: 'an upload attempt failed at its destination (a cut connection, an error answer); details.status is the destination’s HTTP status',
    },
  ],
  routes: [
    {
      method: 'GET',
      path: '/fleet/transfers',
      summary: 'Transfers newest first (filter by state and device), with counts per state and the queue’s bounds',
      query: TransferListQuery,
      response: TransferListResponse,
    },
    {
      method: 'GET',
      path: '/fleet/transfers/:id',
      params: TransferIdParams,
      errors: ['transfer_not_found'],
      summary: 'One transfer: state, progress (bytes_done of bytes_total, rate_bps), attempts, the reason of the last failure',
      response: TransferSchema,
    },
    {
      method: 'POST',
      path: '/fleet/transfers',
      errors: ['target_unknown', 'target_not_allowed', 'device_busy', 'service_unavailable', 'transfer_not_found', 'transfer_not_done'],
      statuses: [202],
      summary:
        'Queues a pull of each named recording chunk of a device into the hub, or (kind upload) an upload of each named done pull to a configured destination (tus); 202: the transfers as queued; GET /fleet/transfers/:id follows one',
      body: EnqueueBody,
      response: EnqueueResponse,
    },
    {
      method: 'DELETE',
      path: '/fleet/transfers/:id',
      params: TransferIdParams,
      errors: ['transfer_not_found', 'transfer_finished'],
      summary: 'Cancels a queued or running transfer (its partial file is removed); answers it cancelled',
      response: TransferSchema,
    },
    {
      method: 'POST',
      path: '/fleet/transfers/:id/retry',
      params: TransferIdParams,
      errors: ['transfer_not_found', 'transfer_finished'],
      summary: 'Queues a failed or cancelled transfer again (resuming from what it had), or tries a queued one waiting out its backoff now',
      response: TransferSchema,
    },
  ],
  async start(ctx) {
    const cfg = ctx.config;
    const ring = ctx.services.get(DEBUG_RING);
    const registry = ctx.services.get(DEVICE_REGISTRY);
    let keeper: StateKeeper | undefined;
    const destinations = new UploadDestinations(cfg.LOOKOUT_TRANSFERS_UPLOAD_URL, cfg.LOOKOUT_TRANSFERS_UPLOAD_PREFIXES);
    const queue = new FileTransferQueue({
      dir: cfg.LOOKOUT_TRANSFERS_DIR ?? join(ctx.runtime.dataDir, 'transfers'),
      concurrency: cfg.LOOKOUT_TRANSFERS_CONCURRENCY,
      perDevice: cfg.LOOKOUT_TRANSFERS_PER_DEVICE,
      maxAttempts: cfg.LOOKOUT_TRANSFERS_MAX_ATTEMPTS,
      backoffMs: cfg.LOOKOUT_TRANSFERS_BACKOFF_MS,
      backoffMaxMs: cfg.LOOKOUT_TRANSFERS_BACKOFF_MAX_MS,
      maxActive: cfg.LOOKOUT_TRANSFERS_MAX_ACTIVE,
      keepFinished: cfg.LOOKOUT_TRANSFERS_KEEP,
      maxBytes: cfg.LOOKOUT_TRANSFERS_MAX_BYTES,
      uploader: tusUpload,
      uploadChunkBytes: cfg.LOOKOUT_TRANSFERS_UPLOAD_CHUNK_BYTES,
      onChange: () => keeper?.changed(),
      // State changes go to the debug ring: GET /fleet/events carries them as `ring` events.
      onState: (t) => ring.record({ kind: 'transfer', device_id: t.device_id, message: describe(t), details: { transfer: t } }),
    });
    const store = ctx.services.optional(HUB_STATE);
    let saved;
    if (store) {
      const loaded = await store.load(STATE_KEY, (raw) => QueueSnapshotSchema.parse(raw));
      if (loaded.warning) ctx.log.warn(loaded.warning);
      saved = loaded.value;
    }
    await queue.init(saved);
    if (store) keeper = store.keep(STATE_KEY, () => queue.snapshot());
    ctx.onStop(async () => {
      await queue.close();
      await keeper?.flush();
    });
    ctx.services.provide(TRANSFERS, queue);

    const limits = {
      concurrency: cfg.LOOKOUT_TRANSFERS_CONCURRENCY,
      per_device: cfg.LOOKOUT_TRANSFERS_PER_DEVICE,
      max_attempts: cfg.LOOKOUT_TRANSFERS_MAX_ATTEMPTS,
      max_active: cfg.LOOKOUT_TRANSFERS_MAX_ACTIVE,
      max_bytes: cfg.LOOKOUT_TRANSFERS_MAX_BYTES,
    };
    ctx.routes.handle<z.output<typeof TransferListQuery>>('GET', '/fleet/transfers', ({ query }) => ({
      transfers: queue.list({ ...query }),
      counts: queue.counts(),
      limits,
      puller: queue.hasPuller(),
    }));
    ctx.routes.handle('GET', '/fleet/transfers/:id', ({ params }) => {
      const t = queue.get(params.id);
      if (!t) throw new LookoutError('transfers.transfer_not_found', `no transfer ${JSON.stringify(params.id.slice(0, 80))}`);
      return t;
    });
    ctx.routes.handle<unknown, z.output<typeof EnqueueBody>>('POST', '/fleet/transfers', async ({ body }) => {
      if (body.kind === 'upload') {
        const destination = destinations.resolve(body.destination);
        const from = body.transfers ?? [];
        // Every pull is checked before any upload is queued: a bad id queues nothing.
        for (const id of from) {
          const t = queue.get(id);
          if (!t) throw new LookoutError('transfers.transfer_not_found', `no transfer ${JSON.stringify(id.slice(0, 80))}`);
          if (t.kind !== 'pull' || t.state !== 'done' || !t.stored) {
            throw new LookoutError(
              'transfers.transfer_not_done',
              `transfer ${t.id} holds no pulled file to upload (${t.kind}, ${t.state}${t.state === 'done' ? ', taken' : ''})`,
            );
          }
        }
        const transfers = [];
        for (const id of from) transfers.push(await queue.enqueueUpload({ from: id, destination, origin: 'api' }));
        return reply({ status: 202, body: { transfers } });
      }
      const device = registry.resolve(body.device ?? '');
      const chunks = body.chunks ?? [];
      const bad = chunks.find((c) => !isRecordingFileName(c));
      if (bad !== undefined)
        throw new LookoutError('bad_request', `${JSON.stringify(bad.slice(0, 160))} is not a recording file name`, { details: { field: 'chunks' } });
      if (!queue.hasPuller()) throw new LookoutError('service_unavailable', 'no plugin pulls recordings on this hub (the media plugin is not running)');
      const transfers = chunks.map((chunk) => queue.enqueue({ deviceId: device.deviceId, chunk, origin: 'api' }));
      return reply({ status: 202, body: { transfers } });
    });
    ctx.routes.handle('DELETE', '/fleet/transfers/:id', ({ params }) => queue.cancel(params.id));
    ctx.routes.handle('POST', '/fleet/transfers/:id/retry', ({ params }) => queue.retry(params.id));
    ctx.log.info({ ...limits, uploads: destinations.configured, restored: saved?.transfers.length ?? 0 }, 'transfers ready');
  },
});

function describe(t: Transfer): string {
  const what = `${t.kind} ${t.device_id}/${t.chunk}: ${t.state}`;
  if (t.state === 'running') return `${what} (attempt ${t.attempts}${t.resumed_from ? `, from byte ${t.resumed_from}` : ''})`;
  if (t.state === 'done') return `${what} (${t.bytes_done} bytes ${t.kind === 'upload' ? 'over' : 'from'} ${t.source ?? '?'})`;
  if (t.error && (t.state === 'failed' || t.state === 'queued')) return `${what}: ${t.error.code}: ${t.error.message}`.slice(0, 300);
  return what;
}
