/**
 * The transfer queue on real files: its bounds on running transfers (in all and per device), retry
 * with exponential backoff until a failure with its reason, cancel of a queued and a running
 * transfer (the partial file removed), and a queue saved while a pull ran, loaded again by a new
 * queue, that resumes the pull from its partial file.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LookoutError } from '../../../../../core/src/errors/lookout-error.js';
import type { PullJob, Puller } from '../../../../../hub/plugins/transfers/src/service.js';
import { FileTransferQueue, QueueSnapshotSchema, type QueueOptions } from '../../../../../hub/plugins/transfers/src/transfer-queue.js';
import type { Transfer } from '../../../../../hub/plugins/transfers/src/transfer-schemas.js';
import { waitFor } from '../../../../support/hub-helpers.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function queueOf(o: Partial<QueueOptions> = {}): Promise<{ queue: FileTransferQueue; states: Transfer[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'transfers-'));
  dirs.push(dir);
  const states: Transfer[] = [];
  const queue = new FileTransferQueue({
    dir,
    concurrency: 4,
    perDevice: 2,
    maxAttempts: 3,
    backoffMs: 20,
    backoffMaxMs: 1000,
    maxActive: 100,
    keepFinished: 100,
    onChange: () => undefined,
    onState: (t) => states.push(t),
    ...o,
  });
  await queue.init(undefined);
  return { queue, states };
}

/** Resolves when the signal aborts, rejecting with its reason (a pull that hangs until stopped). */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });

/** Writes `bytes` into the job's file, as a complete pull does. */
async function complete(job: PullJob, bytes: Buffer): Promise<void> {
  await writeFile(job.path, bytes);
  job.progress(bytes.length, bytes.length);
}

describe('transfer queue', () => {
  it('never runs more than its bound in all and per device, and runs every transfer', async () => {
    const { queue } = await queueOf({ concurrency: 3, perDevice: 2 });
    const running = new Map<string, number>();
    let total = 0;
    let maxTotal = 0;
    const maxPer = new Map<string, number>();
    const gates: (() => void)[] = [];
    queue.setPuller(async (job) => {
      total++;
      running.set(job.deviceId, (running.get(job.deviceId) ?? 0) + 1);
      maxTotal = Math.max(maxTotal, total);
      maxPer.set(job.deviceId, Math.max(maxPer.get(job.deviceId) ?? 0, running.get(job.deviceId)!));
      await new Promise<void>((resolve) => gates.push(resolve));
      total--;
      running.set(job.deviceId, running.get(job.deviceId)! - 1);
      await complete(job, Buffer.from(job.id));
      return { source: 'device', resumedFrom: 0 };
    });
    const ids = [];
    for (let i = 0; i < 5; i++) for (const d of ['cam-a', 'cam-b']) ids.push(queue.enqueue({ deviceId: d, chunk: `c${i}.h265`, origin: 'api' }).id);
    // Releases one pull at a time while the others wait: the queue starts the next within its bounds.
    while (queue.list().some((t) => t.state !== 'done')) {
      await waitFor('a pull waiting at its gate', () => gates.length > 0 || queue.list().every((t) => t.state === 'done'), 10_000, 5);
      gates.shift()?.();
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(maxTotal, 3);
    assert.equal(maxPer.get('cam-a'), 2);
    assert.equal(maxPer.get('cam-b'), 2);
    for (const id of ids) assert.equal(queue.get(id)?.state, 'done');
    assert.deepEqual(queue.counts(), { queued: 0, running: 0, done: 10, failed: 0, cancelled: 0 });
  });

  it('retries a failing pull with a doubling backoff, then fails it with the last reason', async () => {
    const { queue, states } = await queueOf({ maxAttempts: 3, backoffMs: 40 });
    const starts: number[] = [];
    queue.setPuller(() => {
      starts.push(Date.now());
      return Promise.reject(new LookoutError('device_unreachable', `attempt ${starts.length}: connection refused`));
    });
    const t = queue.enqueue({ deviceId: 'cam-a', chunk: 'c.h265', origin: 'api' });
    const end = await queue.settled(t.id);
    assert.equal(end.state, 'failed');
    assert.equal(end.attempts, 3);
    assert.deepEqual(end.error, { code: 'device_unreachable', message: 'attempt 3: connection refused' });
    assert.equal(starts.length, 3);
    assert.ok(starts[1] - starts[0] >= 35, `first backoff ${starts[1] - starts[0]} ms`);
    assert.ok(starts[2] - starts[1] >= 75, `second backoff ${starts[2] - starts[1]} ms (doubled)`);
    // Between attempts it waited queued with the reason and when it is tried again.
    const waiting = states.find((s) => s.state === 'queued' && s.error !== null);
    assert.ok(waiting?.next_attempt_at, JSON.stringify(states));
    assert.equal(queue.failure(end).code, 'device_unreachable');
  });

  it('fails at once when the puller says another attempt cannot help', async () => {
    const { queue } = await queueOf({ maxAttempts: 5 });
    let calls = 0;
    queue.setPuller(() => {
      calls++;
      return Promise.reject(new LookoutError('recording_not_found', 'cam-a has no chunk c.h265'));
    });
    const end = await queue.settled(queue.enqueue({ deviceId: 'cam-a', chunk: 'c.h265', origin: 'api' }).id);
    assert.equal(end.state, 'failed');
    assert.equal(calls, 1);
    assert.equal(end.error?.code, 'recording_not_found');
  });

  it('cancels a running pull (its signal aborts, its partial file goes) and a queued one; a finished one is refused', async () => {
    const { queue } = await queueOf({ perDevice: 1 });
    let started: PullJob | undefined;
    queue.setPuller(async (job) => {
      started = job;
      await writeFile(job.partPath, Buffer.alloc(1000, 1));
      job.progress(1000, 5000);
      return untilAborted(job.signal);
    });
    const first = queue.enqueue({ deviceId: 'cam-a', chunk: 'a.h265', origin: 'api' });
    const second = queue.enqueue({ deviceId: 'cam-a', chunk: 'b.h265', origin: 'api' });
    await waitFor('the first pull running with bytes', () => queue.get(first.id)?.bytes_done === 1000);
    assert.equal(queue.get(second.id)?.state, 'queued', 'one at a time for the device');
    assert.equal(queue.cancel(second.id).state, 'cancelled');
    const job = started!;
    assert.equal(queue.cancel(first.id).state, 'cancelled');
    assert.equal(job.signal.aborted, true);
    await waitFor('the partial file removed', async () => !(await stat(job.partPath).catch(() => undefined)));
    assert.throws(
      () => queue.cancel(first.id),
      (e: LookoutError) => e.code === 'transfers.transfer_finished',
    );
    assert.throws(
      () => queue.get('t-nope') ?? queue.cancel('t-nope'),
      (e: LookoutError) => e.code === 'transfers.transfer_not_found',
    );
    assert.equal((await queue.settled(first.id)).state, 'cancelled');
    // Retried, it runs again from the start.
    assert.ok(['queued', 'running'].includes(queue.retry(first.id).state));
    await waitFor('the retried pull running', () => queue.get(first.id)?.state === 'running' && started !== job);
  });

  it('a queue saved while a pull ran resumes it from its partial file in a new queue', async () => {
    const { queue } = await queueOf();
    const file = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));
    queue.setPuller(async (job) => {
      await writeFile(job.partPath, file.subarray(0, 4000));
      job.setEtag('"v1"');
      job.progress(4000, file.length);
      return untilAborted(job.signal); // the hub stops here
    });
    const t = queue.enqueue({ deviceId: 'cam-a', chunk: 'a.h265', origin: 'api' });
    await waitFor('4000 bytes pulled', () => queue.get(t.id)?.bytes_done === 4000);
    await queue.close();
    const saved = QueueSnapshotSchema.parse(JSON.parse(JSON.stringify(queue.snapshot())));
    assert.equal(saved.transfers[0].state, 'running');

    const again = new FileTransferQueue({ ...queueOptionsOf(queue), onChange: () => undefined, onState: () => undefined });
    await again.init(saved);
    assert.equal(again.get(t.id)?.state, 'queued');
    let resumedAt = -1;
    const puller: Puller = async (job) => {
      assert.equal(job.etag, '"v1"');
      resumedAt = (await stat(job.partPath)).size;
      await appendFile(job.partPath, file.subarray(resumedAt));
      await writeFile(job.path, await readFile(job.partPath));
      await rm(job.partPath);
      return { source: 'device', resumedFrom: resumedAt };
    };
    again.setPuller(puller);
    const end = await again.settled(t.id);
    assert.equal(end.state, 'done');
    assert.equal(resumedAt, 4000);
    assert.equal(end.resumed_from, 4000);
    assert.equal(end.attempts, 2);
    const dest = join(dirs[dirs.length - 1], 'taken.h265');
    await again.take(t.id, dest);
    assert.deepEqual(await readFile(dest), file);
    assert.equal(again.get(t.id)?.stored, false);
  });

  it('refuses past its bound of active transfers and keeps a bounded number of finished ones', async () => {
    const { queue } = await queueOf({ maxActive: 2, keepFinished: 1 });
    queue.enqueue({ deviceId: 'cam-a', chunk: 'a.h265', origin: 'api' });
    queue.enqueue({ deviceId: 'cam-a', chunk: 'b.h265', origin: 'api' });
    assert.throws(
      () => queue.enqueue({ deviceId: 'cam-a', chunk: 'c.h265', origin: 'api' }),
      (e: LookoutError) => e.code === 'device_busy',
    );
    queue.setPuller(async (job) => {
      await complete(job, Buffer.from('x'));
      return { source: 'device', resumedFrom: 0 };
    });
    await waitFor('both done', () => queue.counts().queued + queue.counts().running === 0);
    assert.equal(queue.list().length, 1);
  });
});

/** The options a queue was made with (its folder), to make a second one as a restarted hub does. */
function queueOptionsOf(queue: FileTransferQueue): QueueOptions {
  return (queue as unknown as { o: QueueOptions }).o;
}

describe('transfer queue byte bound (LOOKOUT_TRANSFERS_MAX_BYTES)', () => {
  it('removes the files of the oldest finished transfers past the bound; they stay listed, the newest keep theirs', async () => {
    const { queue } = await queueOf({ maxBytes: 2500 });
    queue.setPuller(async (job) => {
      await complete(job, Buffer.alloc(1000, 1));
      return { source: 'local', resumedFrom: 0 };
    });
    const done: Transfer[] = [];
    for (const chunk of ['a.h265', 'b.h265', 'c.h265', 'd.h265']) {
      const t = queue.enqueue({ deviceId: 'cam-1', chunk, origin: 'api' });
      done.push(await queue.settled(t.id));
      await queue.swept();
    }
    const dir = (queue as unknown as { o: QueueOptions }).o.dir;
    const held = await Promise.all(
      done.map((t) =>
        stat(join(dir, `${t.id}.data`)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    assert.deepEqual(held, [0, 0, 1000, 1000], 'the two oldest files went, the folder holds 2000 of 2500 bytes');
    assert.deepEqual(
      done.map((t) => queue.get(t.id)?.stored),
      [false, false, true, true],
    );
    assert.equal(queue.list().length, 4, 'every transfer stays listed');
    await assert.rejects(queue.take(done[0].id, join(dir, 'x')), { code: 'transfers.transfer_not_done' });
  });
});
