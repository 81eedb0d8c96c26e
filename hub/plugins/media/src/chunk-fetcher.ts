import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ChunkSidecarSchema, sidecarNameOf } from 'lookout/core/contracts';
import { LookoutError, toLookoutError } from 'lookout/core';
import type { DeviceSsh } from '../../device-ssh/src/service.js';
import type { PullJob, PullOutcome, TransferOrigin, TransferQueue } from '../../transfers/src/service.js';
import type { DeviceHttpRecordings } from './device-http-recordings.js';
import type { LocalRecordings, RecordingsAccess } from './recordings-access.js';
import type { ClipSource } from './transcode-cache.js';

/** What a raw stream without a sidecar is assumed to run at (the wire decision). */
export const DEFAULT_FPS = 15;

export interface FetcherDeps {
  /** Where source chunks are put while a build uses them. */
  dir: string;
  /** The device's own tool server (GET /recordings/<file> with its token): tried first. */
  device: DeviceHttpRecordings;
  ssh: () => DeviceSsh | undefined;
  local: LocalRecordings | undefined;
  timeoutMs: number;
  /** A source failed and the next is tried (the ring records it). */
  onFailure?: (deviceId: string, chunk: string, source: FetchSource, error: LookoutError) => void;
  /** The frame rate the hub knows already (data_manifest, a discovery), if any. */
  knownFps: (deviceId: string, chunk: string) => number | undefined;
  /** The hub's transfer queue, when its plugin runs: chunks are pulled through it (progress, retries, resume). */
  transfers?: () => TransferQueue | undefined;
  signal: AbortSignal;
}

/**
 * Failures that say a source cannot be used at all, not that it failed partway: no SSH credentials,
 * no tool server to reach, a tool server that refuses connections (down: SFTP is what reaches such
 * a device). A timeout or a cut transfer is a failure: the source may still hold the chunk.
 */
const UNUSABLE = new Set(['ssh_not_configured', 'target_unknown', 'target_not_allowed', 'device_unreachable']);
/**
 * Failures another attempt later cannot mend: no credentials, a device the hub may not reach, a
 * refused token, a bad name. A pull whose every source failed so is not retried by the queue; a
 * device that is down (device_unreachable) or a cut transfer is.
 */
const LASTING = new Set(['ssh_not_configured', 'target_unknown', 'target_not_allowed', 'device_auth_refused', 'bad_request', 'recording_not_found']);

/** Where a chunk's bytes come from, in the order tried. */
export type FetchSource = 'device' | 'local' | 'sftp';

/** Where source chunks wait for their build, under the media cache folder. */
export function sourcesDirOf(cacheDir: string): string {
  return join(cacheDir, 'sources');
}

/**
 * Removes what the sources folder holds: at start, the chunks (and `.part` downloads) of builds a
 * crash interrupted; each is released after its build otherwise, so nothing here outlives a run.
 * Resolves the number of entries removed.
 */
export async function sweepSources(dir: string): Promise<number> {
  await mkdir(dir, { recursive: true });
  let removed = 0;
  for (const name of await readdir(dir)) {
    await rm(join(dir, name), { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/**
 * Brings a chunk from its device for one build. With the transfer queue (its plugin runs), as one of
 * its pulls (origin says who asked): queued within its bounds, tried again after a backoff, resumed
 * from what came; the pulled file is taken from the queue into the sources folder. Without it,
 * fetched at once (fetchDirect).
 */
export async function fetchChunk(deps: FetcherDeps, deviceId: string, chunk: string, origin: TransferOrigin = 'clip'): Promise<ClipSource> {
  const queue = deps.transfers?.();
  if (!queue) return fetchDirect(deps, deviceId, chunk);
  await mkdir(deps.dir, { recursive: true });
  const queued = queue.enqueue({ deviceId, chunk, origin });
  const end = await queue.settled(queued.id, deps.signal);
  if (end.state !== 'done') throw queue.failure(end);
  const path = join(deps.dir, `${randomBytes(8).toString('hex')}.h265`);
  await queue.take(end.id, path);
  const release = () => rm(path, { force: true });
  const access = accesses(deps).find(([label]) => label === end.source)?.[1];
  const signal = AbortSignal.any([deps.signal, AbortSignal.timeout(deps.timeoutMs)]);
  const fps = deps.knownFps(deviceId, chunk) ?? (access ? await sidecarFps(access, deviceId, chunk, signal) : undefined) ?? DEFAULT_FPS;
  return { path, fps, release };
}

/**
 * The transfer queue's puller: one attempt at a chunk, from the first source that has it. The
 * device's tool server (`GET /recordings/<file>` with its token) resumes the queue's partial file
 * from its offset with Range and If-Range (and reports progress as bytes come), SFTP from the
 * partial file's length (reads at that offset: pullOverSftp); the local folder copies the whole
 * file. A failure keeps the partial file for the next attempt; it is
 * marked not retryable when every source failed for a lasting reason (LASTING).
 */
export async function pullChunk(deps: FetcherDeps, job: PullJob): Promise<PullOutcome> {
  await mkdir(deps.dir, { recursive: true });
  const signal = AbortSignal.any([deps.signal, job.signal, AbortSignal.timeout(deps.timeoutMs)]);
  const failures: string[] = [];
  let notFound: LookoutError | undefined;
  let unreachable = false;
  let lasting = true;
  for (const [label, access] of accesses(deps)) {
    try {
      if (label === 'device') {
        const got = await deps.device.fetchInto(job.deviceId, job.chunk, job.partPath, {
          etag: job.etag,
          signal,
          onProgress: (done, total) => job.progress(done, total),
          onEtag: (etag) => job.setEtag(etag),
        });
        await rename(job.partPath, job.path);
        return { source: label, resumedFrom: got.resumedFrom };
      }
      const ssh = label === 'sftp' ? deps.ssh() : undefined;
      if (ssh?.configured) {
        const got = await pullOverSftp(ssh, job, signal);
        await rename(job.partPath, job.path);
        return { source: label, resumedFrom: got.resumedFrom };
      }
      const { bytes } = await access.download(job.deviceId, job.chunk, job.path, signal);
      job.progress(bytes, bytes);
      await rm(job.partPath, { force: true });
      return { source: label, resumedFrom: 0 };
    } catch (err) {
      const e = toLookoutError(err);
      if (job.signal.aborted) throw e; // cancelled, or the hub stops: no other source is asked
      if (deps.signal.aborted) {
        // This plugin stops: the queue keeps the pull for later, as no failure.
        throw new LookoutError('service_unavailable', 'the media plugin stopped', { cause: e, details: { interrupted: true } });
      }
      deps.onFailure?.(job.deviceId, job.chunk, label, e);
      if (e.code === 'recording_not_found' || /no such file/i.test(e.message)) notFound ??= e;
      else {
        if (!UNUSABLE.has(e.code)) unreachable = true;
        if (!LASTING.has(e.code)) lasting = false;
      }
      failures.push(`${label}: ${e.message}`);
      if (signal.aborted) break;
    }
  }
  if (notFound && !unreachable) {
    throw new LookoutError('recording_not_found', `${job.deviceId} has no chunk ${job.chunk}`, { cause: notFound, details: { retryable: false } });
  }
  throw new LookoutError('recordings_unavailable', `${job.deviceId}/${job.chunk} could not be fetched: ${failures.join('; ')}`, {
    details: { device_id: job.deviceId, chunk: job.chunk, attempts: failures, retryable: !lasting },
  });
}

/** What the partial file's ETag holds when SFTP began it: the remote file's mtime. */
const SFTP_ETAG = /^sftp-mtime:(\d+)$/;

/**
 * A pull over SFTP, resumed from the partial file's length when SFTP began it (its saved remote
 * mtime is the file's still: another file, or a partial the device's tool server began under its
 * own ETag, starts over). Every byte that comes stays in the partial file for the next attempt.
 */
async function pullOverSftp(ssh: DeviceSsh, job: PullJob, signal: AbortSignal): Promise<{ resumedFrom: number }> {
  const mtime = SFTP_ETAG.exec(job.etag ?? '')?.[1];
  const have = mtime === undefined ? 0 : ((await stat(job.partPath).catch(() => undefined))?.size ?? 0);
  let total: number | undefined;
  return ssh.downloadFrom(job.deviceId, job.chunk, job.partPath, {
    offset: have,
    mtimeMs: mtime === undefined ? undefined : Number(mtime),
    signal,
    onStart: (size, mtimeMs) => {
      total = size;
      job.setEtag(`sftp-mtime:${mtimeMs}`);
    },
    onProgress: (bytes) => job.progress(bytes, total),
  });
}

/**
 * Brings a chunk from its device at once, from the first source that has it (each written to
 * a temporary name and renamed there): the device's tool server (`GET /recordings/<file>` with the
 * device's token, resumed by Range: no root password needed), the local recordings folder when one
 * is configured, then SFTP (DEVICE_SSH.download). A source that fails is recorded (onFailure) and
 * the next is tried; the chunk is recording_not_found only when no source that could hold it was
 * unreachable.
 */
export async function fetchDirect(deps: FetcherDeps, deviceId: string, chunk: string): Promise<ClipSource> {
  await mkdir(deps.dir, { recursive: true });
  const path = join(deps.dir, `${randomBytes(8).toString('hex')}.h265`);
  const release = () => rm(path, { force: true });
  const signal = AbortSignal.any([deps.signal, AbortSignal.timeout(deps.timeoutMs)]);
  const failures: string[] = [];
  let notFound: LookoutError | undefined;
  let unreachable = false;
  for (const [label, access] of accesses(deps)) {
    try {
      await access.download(deviceId, chunk, path, signal);
      const fps = deps.knownFps(deviceId, chunk) ?? (await sidecarFps(access, deviceId, chunk, signal)) ?? DEFAULT_FPS;
      return { path, fps, release };
    } catch (err) {
      await release();
      const e = toLookoutError(err);
      deps.onFailure?.(deviceId, chunk, label, e);
      if (e.code === 'recording_not_found' || /no such file/i.test(e.message)) notFound ??= e;
      // A source that cannot be asked (no SSH credentials, no tool server to reach) cannot hold the chunk either.
      else if (!UNUSABLE.has(e.code)) unreachable = true;
      failures.push(`${label}: ${e.message}`);
      if (signal.aborted) break;
    }
  }
  if (notFound && !unreachable) throw new LookoutError('recording_not_found', `${deviceId} has no chunk ${chunk}`, { cause: notFound });
  throw new LookoutError('recordings_unavailable', `${deviceId}/${chunk} could not be fetched: ${failures.join('; ')}`, {
    details: { device_id: deviceId, chunk, attempts: failures },
  });
}

type Access = Pick<RecordingsAccess, 'read' | 'download'>;

function accesses(deps: FetcherDeps): [FetchSource, Access][] {
  const out: [FetchSource, Access][] = [['device', deps.device]];
  if (deps.local) out.push(['local', deps.local]);
  const ssh = deps.ssh();
  if (ssh?.configured) out.push(['sftp', ssh]);
  else out.push(['sftp', unconfigured(ssh)]);
  return out;
}

/** Stands for SSH when it cannot be used, so its reason is among the failures. */
function unconfigured(ssh: DeviceSsh | undefined): RecordingsAccess {
  const fail = () =>
    Promise.reject(
      new LookoutError('ssh_not_configured', ssh ? 'no SSH credentials configured (DEVICE_PASSWORD or a key file)' : 'the hub runs no device-ssh plugin'),
    );
  return { list: fail, read: fail, download: fail };
}

async function sidecarFps(access: Access, deviceId: string, chunk: string, signal: AbortSignal): Promise<number | undefined> {
  try {
    const raw: unknown = JSON.parse((await access.read(deviceId, sidecarNameOf(chunk), 64 * 1024, signal)).toString('utf8'));
    const s = ChunkSidecarSchema.shape.fps.safeParse((raw as Record<string, unknown>).fps);
    return s.success ? s.data : undefined;
  } catch {
    return undefined;
  }
}
