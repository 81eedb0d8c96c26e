import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHUNK_NAME_PATTERN } from 'lookout/core/contracts';
import { LookoutError } from 'lookout/core';
import { jpegFromHevc, type JpegOptions } from 'lookout/lib/media';
import type { DeviceSsh, RemoteFile } from '../../device-ssh/src/service.js';
import { GopTail } from './gop-tail.js';
import type { Snapshot, SnapshotRequest } from './snapshot-types.js';

/** Pieces the downloaded chunk is read in. */
const READ_PIECE_BYTES = 256 * 1024;

export interface SshStepSettings {
  /** The newest chunk is fetched only up to this size. */
  maxChunkBytes: number;
  /** Bound on the GOP kept in memory while the chunk is read (LOOKOUT_HUB_SNAPSHOT_TAIL_MAX_BYTES): only the last is decoded. */
  tailMaxBytes: number;
  timeoutMs: number;
  decodeTimeoutMs: number;
}

/**
 * Step 3: over SSH, the last picture of the newest complete chunk in the device's recordings root
 * (chunks in progress are `.<name>.part` and never match the chunk pattern). Only the chunk's last
 * GOP is decoded, with the parameter sets from its start. The chunk is downloaded to a temporary
 * file and read from it in pieces into a GopTail bounded by `tailMaxBytes`: memory holds one GOP,
 * never the chunk.
 */
export async function snapshotOverSsh(ssh: DeviceSsh | undefined, req: SnapshotRequest, settings: SshStepSettings): Promise<Snapshot> {
  const id = req.device.deviceId;
  if (!ssh) throw new LookoutError('ssh_not_configured', 'the hub runs no device-ssh plugin');
  if (req.device.ssh === null) throw new LookoutError('ssh_not_configured', `${id} has no SSH address the hub may contact`);
  const signal = AbortSignal.any([req.signal, AbortSignal.timeout(settings.timeoutMs)]);
  const files = await listChunks(ssh, id, signal);
  const newest = newestChunk(files);
  if (!newest) throw new LookoutError('recording_not_found', `${id} has no complete recording chunk in ${ssh.recordingsRoot(id)}`);
  if (newest.size > settings.maxChunkBytes) {
    throw new LookoutError(
      'recording_unreadable',
      `${id}: the newest chunk ${newest.name} is ${newest.size} bytes, more than the ${settings.maxChunkBytes} a snapshot fetches`,
    );
  }
  const dir = await mkdtemp(join(tmpdir(), 'lookout-snapshot-'));
  try {
    const local = join(dir, 'chunk.h265');
    await ssh.download(id, newest.name, local, signal);
    const tail = new GopTail(settings.tailMaxBytes);
    for await (const piece of createReadStream(local, { highWaterMark: READ_PIECE_BYTES, signal })) tail.push(piece as Buffer);
    const jpeg = await lastPictureOf(tail, newest.name, { width: req.width, quality: req.quality, timeoutMs: settings.decodeTimeoutMs, signal }, id);
    return { jpeg, source: 'ssh', chunk: newest.name, capturedAt: new Date(newest.mtimeMs).toISOString() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The chunk's last picture; when that one does not decode (a chunk cut mid-picture), the one before
 * it, which the next picture's start code proves whole.
 */
async function lastPictureOf(tail: GopTail, name: string, options: JpegOptions, id: string): Promise<Buffer> {
  const wholeOnly = tail.snapshot();
  tail.flush();
  const all = tail.snapshot();
  if (!all) throw new LookoutError('recording_unreadable', `${id}: the chunk ${name} holds no complete keyframe`);
  try {
    return await jpegFromHevc(all.stream, options);
  } catch (err) {
    if (!wholeOnly || wholeOnly.pictures === all.pictures || options.signal?.aborted) throw err;
    return jpegFromHevc(wholeOnly.stream, options);
  }
}

/** SFTP first; a device whose SFTP subsystem fails may still answer a shell listing. */
async function listChunks(ssh: DeviceSsh, id: string, signal: AbortSignal): Promise<RemoteFile[]> {
  try {
    return await ssh.list(id, 'sftp', signal);
  } catch (err) {
    if (!(err instanceof LookoutError) || err.code !== 'ssh_failed' || signal.aborted) throw err;
    return ssh.list(id, 'shell', signal);
  }
}

/** Chunk names begin with their UTC start time, so the greatest name is the newest; mtime breaks ties. */
export function newestChunk(files: readonly RemoteFile[]): RemoteFile | undefined {
  return files
    .filter((f) => CHUNK_NAME_PATTERN.test(f.name) && f.size > 0)
    .sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : b.mtimeMs - a.mtimeMs))[0];
}
