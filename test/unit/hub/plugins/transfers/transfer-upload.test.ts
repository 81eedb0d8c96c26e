/**
 * Uploads through the transfer queue to a real tus server (@tus/server on 127.0.0.1, behind a relay
 * that cuts upload requests): a done pull's file is sent whole; an upload cut more often than one
 * attempt survives is tried again by the queue and resumes from the destination's offset (the
 * second attempt's first PATCH starts there), byte-identical at the end; a destination that refuses
 * the hub fails the upload at once (no retry); a running upload is cancelled; the upload keeps its
 * own link to the file, so taking the pull away meanwhile loses nothing.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FileTransferQueue } from '../../../../../hub/plugins/transfers/src/transfer-queue.js';
import type { Transfer } from '../../../../../hub/plugins/transfers/src/transfer-schemas.js';
import { tusUpload } from '../../../../../hub/plugins/transfers/src/tus-upload.js';
import { waitFor } from '../../../../support/hub-helpers.js';
import { TusDestination } from '../../../../support/tus-destination.js';

const CHUNK = 64 * 1024;
const SIZE = 5 * CHUNK + 1234;

describe('transfer queue uploads (tus)', () => {
  let dir: string;
  let dest: TusDestination;
  let queue: FileTransferQueue;
  const files = new Map<string, Buffer>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'transfers-upload-'));
    dest = await TusDestination.start(join(dir, 'destination'));
    queue = new FileTransferQueue({
      dir: join(dir, 'queue'),
      concurrency: 4,
      perDevice: 2,
      maxAttempts: 3,
      backoffMs: 50,
      backoffMaxMs: 200,
      maxActive: 100,
      keepFinished: 100,
      uploader: tusUpload,
      uploadChunkBytes: CHUNK,
      onChange: () => undefined,
      onState: () => undefined,
    });
    await queue.init(undefined);
    // The puller brings random bytes: each chunk's content is kept to compare with what arrives.
    queue.setPuller(async (job) => {
      const bytes = randomBytes(SIZE);
      files.set(job.chunk, bytes);
      await writeFile(job.path, bytes);
      job.progress(bytes.length, bytes.length);
      return { source: 'local', resumedFrom: 0 };
    });
  });

  after(async () => {
    await queue?.close();
    await dest?.close();
    if (dir && !process.env.KEEP) await rm(dir, { recursive: true, force: true });
  });

  async function pulled(chunk: string): Promise<Transfer> {
    const t = queue.enqueue({ deviceId: 'cam-1', chunk, origin: 'api' });
    const end = await queue.settled(t.id);
    assert.equal(end.state, 'done');
    return end;
  }

  it('uploads a done pull whole; cut more often than one attempt survives, resumes from the destination’s offset', async () => {
    const pull = await pulled('20260101T000000Z_0001.h265');
    dest.cutsLeft = 1;
    dest.cutAfter = 2 * CHUNK + 500; // inside the third PATCH: two chunks are at the destination
    const before = dest.patchOffsets.length;
    const up = await queue.enqueueUpload({ from: pull.id, destination: dest.url, origin: 'api' });
    assert.equal(up.kind, 'upload');
    assert.equal(up.upload_of, pull.id);
    const end = await queue.settled(up.id);
    assert.equal(end.state, 'done', JSON.stringify(end));
    assert.equal(dest.cutsMade, 1);
    assert.equal(end.attempts, 2, JSON.stringify(end));
    assert.ok(end.resumed_from !== null && end.resumed_from >= CHUNK, JSON.stringify(end));
    const offsets = dest.patchOffsets.slice(before);
    assert.equal(offsets[0], 0);
    // The second attempt asked the destination (HEAD) and sent only the rest.
    assert.ok(offsets.includes(end.resumed_from), offsets.join(','));
    assert.ok(offsets.filter((o) => o === 0).length === 1, `one PATCH from 0 only: ${offsets.join(',')}`);
    assert.equal(end.bytes_done, SIZE);
    assert.equal(end.source, 'tus');
    assert.equal(end.stored, false);
    assert.match(end.upload_url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/files\/[0-9a-f]+$/);
    assert.deepEqual((await dest.uploads()).get(pull.chunk), files.get(pull.chunk));
    assert.ok(!existsSync(join(dir, 'queue', `${up.id}.data`)), 'the sent copy is gone');
    assert.equal(queue.get(pull.id)?.stored, true, 'the pull keeps its own file');
  });

  it('keeps its own link to the file: the pull taken away meanwhile loses nothing', async () => {
    const pull = await pulled('20260101T000000Z_0002.h265');
    dest.refuse = 503; // waits out a backoff while the pull's file is taken
    const up = await queue.enqueueUpload({ from: pull.id, destination: dest.url, origin: 'api' });
    await queue.take(pull.id, join(dir, 'taken.h265'));
    await waitFor('a first failed attempt', () => (queue.get(up.id)?.attempts ?? 0) >= 1 && queue.get(up.id)?.state === 'queued');
    dest.refuse = undefined;
    const end = await queue.settled(up.id);
    assert.equal(end.state, 'done', JSON.stringify(end));
    assert.deepEqual((await dest.uploads()).get(pull.chunk), files.get(pull.chunk));
    await assert.rejects(queue.enqueueUpload({ from: pull.id, destination: dest.url, origin: 'api' }), { code: 'transfers.transfer_not_done' });
  });

  it('fails at once when the destination refuses the hub (403), with its status', async () => {
    const pull = await pulled('20260101T000000Z_0003.h265');
    dest.refuse = 403;
    try {
      const up = await queue.enqueueUpload({ from: pull.id, destination: dest.url, origin: 'api' });
      const end = await queue.settled(up.id);
      assert.equal(end.state, 'failed');
      assert.equal(end.attempts, 1, 'a refusal is not tried again');
      assert.equal(end.error?.code, 'transfers.upload_failed');
      assert.match(end.error?.message ?? '', /403/);
    } finally {
      dest.refuse = undefined;
    }
  });

  it('cancels a running upload; a cancelled upload cannot be retried without its file', async () => {
    const pull = await pulled('20260101T000000Z_0004.h265');
    dest.stall = true;
    const up = await queue.enqueueUpload({ from: pull.id, destination: dest.url, origin: 'api' });
    await waitFor('the upload running', () => queue.get(up.id)?.state === 'running');
    const cancelled = queue.cancel(up.id);
    dest.stall = false;
    assert.equal(cancelled.state, 'cancelled');
    await waitFor('the upload’s copy removed', () => !existsSync(join(dir, 'queue', `${up.id}.data`)));
    queue.retry(up.id);
    const end = await queue.settled(up.id);
    assert.equal(end.state, 'failed');
    assert.equal(end.error?.code, 'transfers.transfer_not_done');
  });
});
