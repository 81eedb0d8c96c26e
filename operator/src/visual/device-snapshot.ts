import { posix } from 'node:path';
import { CHUNK_NAME_PATTERN } from 'lookout/core/contracts';
import { LookoutError } from 'lookout/core';
import { jpegFromHevc } from 'lookout/lib/media';
import type { DeviceSession } from '../remote/device-session.js';

/** The most of a chunk read for a snapshot: chunks are about 60 s of H.265. */
const MAX_CHUNK_BYTES = 64 * 1024 * 1024;

export interface DeviceSnapshot {
  chunk: string;
  jpeg: Buffer;
}

/**
 * A snapshot of what the camera sees, over SSH alone: the newest complete recording chunk (not the
 * one being written, as .h265_status names it), its last picture decoded to JPEG here.
 */
export async function snapshotOverSsh(session: DeviceSession, recordingsDir: string, width: number): Promise<DeviceSnapshot> {
  const listing = await session.sftpCall<{ filename: string; attrs: { size: number } }[]>(`listing ${recordingsDir}`, (sftp, done) =>
    sftp.readdir(recordingsDir, (err, list) => done(err, list)),
  );
  let writing: unknown;
  try {
    writing = (JSON.parse((await session.readText(posix.join(recordingsDir, '.h265_status'))) ?? '{}') as { writing_chunk?: unknown }).writing_chunk;
  } catch {
    writing = undefined;
  }
  const newest = listing
    .filter((e) => CHUNK_NAME_PATTERN.test(e.filename) && e.filename !== writing && e.attrs.size > 0)
    .sort((a, b) => (a.filename < b.filename ? 1 : -1))[0];
  if (!newest) throw new LookoutError('recording_not_found', `${session.where}: no complete recording chunk in ${recordingsDir} to take a snapshot from`);
  if (newest.attrs.size > MAX_CHUNK_BYTES) {
    throw new LookoutError(
      'recording_unreadable',
      `${session.where}: ${newest.filename} is ${newest.attrs.size} bytes, more than a snapshot reads (${MAX_CHUNK_BYTES})`,
    );
  }
  const path = posix.join(recordingsDir, newest.filename);
  const stream = await session.sftpCall<Buffer>(`reading ${path}`, (sftp, done) => sftp.readFile(path, (err, data) => done(err, data)));
  return { chunk: newest.filename, jpeg: await jpegFromHevc(stream, { width, quality: 90, timeoutMs: 30_000 }) };
}
