import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ChunkSidecarSchema, LookoutError, sidecarNameOf, toLookoutError } from 'lookout/core';
import type { DeviceSsh } from '../../device-ssh/src/service.js';
import type { LocalRecordings, RecordingsAccess } from './recordings-access.js';
import type { ClipSource } from './transcode-cache.js';

/** What a raw stream without a sidecar is assumed to run at (the wire decision). */
export const DEFAULT_FPS = 15;

export interface FetcherDeps {
  /** Where source chunks are put while a build uses them. */
  dir: string;
  ssh: () => DeviceSsh | undefined;
  local: LocalRecordings | undefined;
  timeoutMs: number;
  /** The frame rate the hub knows already (data_manifest, a discovery), if any. */
  knownFps: (deviceId: string, chunk: string) => number | undefined;
  signal: AbortSignal;
}

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
 * Brings a chunk from its device for one build: over SFTP (DEVICE_SSH.download, written to a
 * temporary name and renamed there), or from the local recordings folder when one is configured
 * and holds the device. The tool server carries JSON only, so the bytes never come through it.
 * A chunk the local folder lacks is still tried over SFTP (the folder may lag the device, or hold
 * another copy); it is recording_not_found only when no source that could hold it was unreachable.
 */
export async function fetchChunk(deps: FetcherDeps, deviceId: string, chunk: string): Promise<ClipSource> {
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
      if (e.code === 'recording_not_found' || /no such file/i.test(e.message)) notFound ??= e;
      // SSH not configured is no source at all: it cannot hold the chunk either.
      else if (e.code !== 'ssh_not_configured') unreachable = true;
      failures.push(`${label}: ${e.message}`);
      if (signal.aborted) break;
    }
  }
  if (notFound && !unreachable) throw new LookoutError('recording_not_found', `${deviceId} has no chunk ${chunk}`, { cause: notFound });
  throw new LookoutError(
    'recordings_unavailable',
    `${deviceId}/${chunk} could not be fetched: ${failures.join('; ') || 'no SSH and no local recordings configured'}`,
    {
      details: { device_id: deviceId, chunk, attempts: failures },
    },
  );
}

function accesses(deps: FetcherDeps): [string, RecordingsAccess][] {
  const out: [string, RecordingsAccess][] = [];
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

async function sidecarFps(access: RecordingsAccess, deviceId: string, chunk: string, signal: AbortSignal): Promise<number | undefined> {
  try {
    const raw: unknown = JSON.parse((await access.read(deviceId, sidecarNameOf(chunk), 64 * 1024, signal)).toString('utf8'));
    const s = ChunkSidecarSchema.shape.fps.safeParse((raw as Record<string, unknown>).fps);
    return s.success ? s.data : undefined;
  } catch {
    return undefined;
  }
}
