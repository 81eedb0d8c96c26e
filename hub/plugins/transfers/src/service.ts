import { serviceToken, type LookoutError } from 'lookout/core';
import type { Transfer, TransferOrigin, TransferState } from './transfer-schemas.js';

export {
  TRANSFER_KINDS,
  TRANSFER_STATES,
  TRANSFER_ORIGINS,
  TransferSchema,
  type Transfer,
  type TransferKind,
  type TransferOrigin,
  type TransferState,
} from './transfer-schemas.js';

/** One attempt of a pull, handed to the puller. */
export interface PullJob {
  id: string;
  deviceId: string;
  chunk: string;
  /** Where the whole file must be when the pull resolves; `partPath` holds what came so far. */
  path: string;
  /** A partial file kept across attempts and restarts: the puller resumes from its size when `etag` is the device's still. */
  partPath: string;
  /** The device's ETag saved with the partial file (If-Range), or undefined. */
  etag: string | undefined;
  signal: AbortSignal;
  /** Bytes on disk so far and the size the device announced (reported as they come). */
  progress(bytesDone: number, bytesTotal: number | undefined): void;
  /** Saves the device's ETag with the partial file, for a later resume. */
  setEtag(etag: string | undefined): void;
}

export interface PullOutcome {
  /** Where the bytes came from: device, local, sftp. */
  source: string;
  /** Offset the successful attempt started from (0: from the start). */
  resumedFrom: number;
}

/**
 * Brings a chunk from its device (the media plugin's sources: the tool server's GET /recordings
 * with Range, a local folder, SFTP). A LookoutError with `details.retryable === false` is not tried
 * again (the chunk is not there, no source may be asked); any other is, after the backoff.
 */
export type Puller = (job: PullJob) => Promise<PullOutcome>;

/** One attempt of an upload of a file the hub holds to a destination (the tus protocol). */
export interface UploadJob {
  id: string;
  /** The file sent (the upload's own link to the pulled file). */
  file: string;
  /** The chunk's name, sent as the upload's filename metadata. */
  name: string;
  /** The destination's tus creation URL. */
  endpoint: string;
  /** The upload's URL at the destination saved by an attempt before: resumed from the destination's offset. */
  uploadUrl: string | undefined;
  /** Bytes per PATCH request. */
  chunkBytes: number;
  signal: AbortSignal;
  progress(bytesDone: number, bytesTotal: number | undefined): void;
  /** Saves the upload's URL at the destination (as soon as it is created), for a later resume. */
  setUploadUrl(url: string): void;
}

export interface UploadOutcome {
  /** The protocol: tus. */
  source: string;
  /** The destination's offset the successful attempt started from (0: from the start). */
  resumedFrom: number;
  /** The upload's URL at the destination. */
  url: string;
}

/** Sends a file to its destination; failures follow the Puller's rule (`details.retryable === false`: not tried again). */
export type Uploader = (job: UploadJob) => Promise<UploadOutcome>;

export interface EnqueueUpload {
  /** A done pull whose file the hub holds (`stored`): the upload keeps its own link to the file. */
  from: string;
  /** The destination's tus creation URL (checked against the configured ones by the caller). */
  destination: string;
  origin: TransferOrigin;
}

export interface EnqueuePull {
  deviceId: string;
  chunk: string;
  origin: TransferOrigin;
}

export interface TransferFilter {
  state?: TransferState;
  device?: string;
  limit?: number;
}

/**
 * The hub's transfer queue (GET/POST /fleet/transfers): pulls of recording chunks with bounded
 * concurrency (in all and per device), retries with exponential backoff, resume of a partial pull,
 * cancel; kept in the hub state, so that a restart resumes what ran.
 */
export interface TransferQueue {
  /** Queues a pull; throws device_busy when the queue holds its bound of active transfers. */
  enqueue(pull: EnqueuePull): Transfer;
  /**
   * Queues an upload of a done pull's file to a destination; throws transfer_not_found, transfer_not_done
   * (the pull holds no file), device_busy (the bound of active transfers).
   */
  enqueueUpload(upload: EnqueueUpload): Promise<Transfer>;
  get(id: string): Transfer | undefined;
  list(filter?: TransferFilter): Transfer[];
  /** Cancels a queued or running transfer (its partial file is removed); a finished one is refused (transfer_finished). */
  cancel(id: string): Transfer;
  /** Queues a failed or cancelled transfer again, its attempts counted afresh. */
  retry(id: string): Transfer;
  /**
   * The transfer once it is done, failed or cancelled. `signal` stops the waiting only, not the
   * transfer. Rejects with transfer_not_found for an unknown id.
   */
  settled(id: string, signal?: AbortSignal): Promise<Transfer>;
  /**
   * Moves a done pull's file to `dest` (the caller owns it from then: a clip build's source);
   * the transfer stays listed with `stored: false`. Throws transfer_not_found / transfer_not_done.
   */
  take(id: string, dest: string): Promise<void>;
  /** The error a failed transfer ended with, as a LookoutError (its code and message), for callers that answer it. */
  failure(t: Transfer): LookoutError;
  /** Installs the function that pulls (one at a time); answers its removal. Queued pulls wait until one is installed. */
  setPuller(puller: Puller): () => void;
}

export const TRANSFERS = serviceToken<TransferQueue>('transfers');

/** The plugin's own error codes, as another plugin's route declares them (`transfers.<code>`). */
export const TRANSFER_ERRORS = ['transfers.transfer_not_found', 'transfers.transfer_finished', 'transfers.transfer_not_done'] as const;
