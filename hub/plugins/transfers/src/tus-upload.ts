import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { DetailedError, Upload } from 'tus-js-client';
import { LookoutError } from 'lookout/core';
import type { UploadJob, UploadOutcome } from './service.js';

/**
 * Answers from a destination that another attempt cannot mend: it refuses the hub (401, 403), the
 * file (413) or the request (400, 405, 415). Anything else (a cut connection, a 5xx, a 409 offset
 * mismatch, 423, 429) is tried again after the queue's backoff, resumed from the destination's offset.
 */
const LASTING_STATUS = new Set([400, 401, 403, 405, 413, 415]);

/**
 * One attempt of an upload with the tus resumable upload protocol (tus.io, through tus-js-client):
 * a new upload is created at the destination (its creation URL) unless the attempts before saved
 * the upload's URL, in which case the destination is asked its offset (HEAD) and only the rest is
 * sent (PATCH from that offset); an upload the destination no longer knows (404, 410) is created
 * again. Each PATCH carries at most `chunkBytes`, so a destination that drops the bytes of a cut
 * request loses at most that much. tus-js-client's own retries are off: the queue retries with its
 * backoff and counts the attempts.
 */
export async function tusUpload(job: UploadJob): Promise<UploadOutcome> {
  const size = (await stat(job.file)).size;
  let resumedFrom: number | undefined;
  return new Promise<UploadOutcome>((resolve, reject) => {
    let settled = false;
    const done = (fn: () => void) => {
      if (settled) return;
      settled = true;
      job.signal.removeEventListener('abort', onAbort);
      fn();
    };
    const upload = new Upload(createReadStream(job.file), {
      endpoint: job.endpoint,
      uploadUrl: job.uploadUrl ?? null,
      uploadSize: size,
      chunkSize: job.chunkBytes,
      retryDelays: null,
      storeFingerprintForResuming: false,
      removeFingerprintOnSuccess: false,
      metadata: { filename: job.name, filetype: 'video/h265' },
      onUploadUrlAvailable: () => {
        if (upload.url) job.setUploadUrl(upload.url);
      },
      onBeforeRequest: (req) => {
        // The first PATCH of the attempt starts at the offset the destination already holds.
        if (req.getMethod() === 'PATCH') resumedFrom ??= Number(req.getHeader('Upload-Offset') ?? 0);
      },
      onProgress: (sent, total) => job.progress(sent, total),
      onSuccess: () => done(() => resolve({ source: 'tus', resumedFrom: resumedFrom ?? 0, url: upload.url ?? job.endpoint })),
      onError: (err) => done(() => reject(uploadError(err, job))),
    });
    const onAbort = () => {
      // The upload stays at the destination (no termination): a later attempt resumes it.
      void upload.abort(false).catch(() => undefined);
      done(() => reject(job.signal.reason instanceof Error ? job.signal.reason : new LookoutError('transfers.upload_failed', 'the upload was stopped')));
    };
    if (job.signal.aborted) return onAbort();
    job.signal.addEventListener('abort', onAbort, { once: true });
    upload.start();
  });
}

function uploadError(err: Error, job: UploadJob): LookoutError {
  const status = err instanceof DetailedError ? err.originalResponse?.getStatus() : undefined;
  // tus-js-client's message names the URL and the cause; the destination's address is configured, not secret.
  const message = `upload of ${job.name} to ${job.endpoint}: ${err.message}`.slice(0, 480);
  const lasting = status !== undefined && LASTING_STATUS.has(status);
  return new LookoutError('transfers.upload_failed', message, { details: { status: status ?? null, retryable: !lasting } });
}
