import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LookoutError } from 'lookout/core';
import type { DeviceSession } from './device-session.js';
import type { Progress } from './progress.js';

/** Bytes per SFTP write request (ssh2 splits what the server's limits do not take). */
const CHUNK = 64 * 1024;
/** Write requests in flight: what keeps a long link busy. */
const IN_FLIGHT = 16;
/**
 * Writes complete out of order, so after an interruption the partial file may hold a hole within
 * the last window of requests: a resume starts that far before its end.
 */
const RESUME_WINDOW = CHUNK * IN_FLIGHT;
/** Room left free beyond the file itself (the device keeps running on that disk). */
const FREE_MARGIN = 1024 * 1024;

export interface UploadOptions {
  progress: Progress;
  /** Bytes per second at most (like scp -l); undefined: as fast as the link goes. */
  bandwidthBytesPerSecond?: number;
  /** Longest wait for the checksum on the device. */
  checksumTimeoutMs: number;
}

export interface UploadReport {
  file: string;
  remote: string;
  bytes: number;
  /** Where the copy started: above 0 when an interrupted copy was resumed. */
  resumed_from: number;
  sha256: string;
  seconds: number;
}

export function partialPathOf(remotePath: string): string {
  return posix.join(posix.dirname(remotePath), `.${posix.basename(remotePath)}.partial`);
}

/**
 * Copies a local file to the device over SFTP so that a half-copied file never carries its name: it
 * goes to `.<name>.partial` (continued where an interrupted copy left it), its SHA-256 is checked
 * on the device, and only then is it renamed over the target in one step. A copy that cannot fit
 * is refused before a byte is sent, with the figures.
 */
export async function uploadResumable(session: DeviceSession, localPath: string, remotePath: string, options: UploadOptions): Promise<UploadReport> {
  const startedAt = Date.now();
  const size = (await stat(localPath)).size;
  const localHash = sha256OfFile(localPath);
  localHash.catch(() => undefined);
  const dir = posix.dirname(remotePath);
  await session.mkdirs(dir);
  const partial = partialPathOf(remotePath);
  const existing = (await session.sizeOf(partial)) ?? 0;
  const from = existing > size ? 0 : Math.max(0, Math.floor((existing - RESUME_WINDOW) / CHUNK) * CHUNK);
  if (existing > size) await session.remove(partial);

  const free = await session.freeSpace(dir);
  const needed = size - Math.min(existing, size);
  if (needed + FREE_MARGIN > free.availableBytes) {
    throw new LookoutError(
      'device_storage_full',
      `${session.where}: ${posix.basename(remotePath)} needs ${mb(needed)} MB (+${mb(FREE_MARGIN)} MB margin) in ${dir}, and ${mb(free.availableBytes)} MB of ${mb(free.totalBytes)} MB are free: nothing copied`,
      { details: { needed_bytes: needed, available_bytes: free.availableBytes, total_bytes: free.totalBytes, dir } },
    );
  }

  const sftp = await session.sftp();
  const handle = await session.sftpCall<Buffer>(`opening ${partial}`, (s, done) => s.open(partial, from > 0 ? 'r+' : 'w', 0o644, done));
  const local = await open(localPath, 'r');
  options.progress.start(size, from, posix.basename(remotePath));
  try {
    await new Promise<void>((resolve, reject) => {
      let next = from;
      let inFlight = 0;
      let failed = false;
      let done = from;
      const issuedAt = Date.now();
      const issuedFrom = from;
      const pump = async (): Promise<void> => {
        while (!failed && inFlight < IN_FLIGHT && next < size) {
          if (options.bandwidthBytesPerSecond) {
            const ahead = (next - issuedFrom) / options.bandwidthBytesPerSecond - (Date.now() - issuedAt) / 1000;
            if (ahead > 0) {
              await sleep(Math.min(ahead * 1000, 200));
              continue;
            }
          }
          const position = next;
          const length = Math.min(CHUNK, size - position);
          next += length;
          inFlight++;
          const buffer = Buffer.allocUnsafe(length);
          const { bytesRead } = await local.read(buffer, 0, length, position);
          if (bytesRead !== length) return fail(new LookoutError('ssh_failed', `${localPath} changed while it was copied`));
          sftp.write(handle, buffer, 0, length, position, (err) => {
            inFlight--;
            if (err) return void onWriteError(err);
            done += length;
            options.progress.update(done);
            if (done >= size && inFlight === 0) return resolve();
            void pump().catch(fail);
          });
        }
        if (size === 0 || (done >= size && inFlight === 0)) resolve();
      };
      const fail = (err: unknown): void => {
        if (failed) return;
        failed = true;
        reject(err instanceof Error ? err : new Error(String(err)));
      };
      const onWriteError = async (err: Error): Promise<void> => {
        if (failed) return;
        // A refused write on a disk that filled meanwhile says so, with the figures.
        const now = await session.freeSpace(dir).catch(() => undefined);
        if (now && now.availableBytes < CHUNK * 2) {
          fail(
            new LookoutError(
              'device_storage_full',
              `${session.where}: the disk of ${dir} filled during the copy (${mb(now.availableBytes)} MB free); the partial copy is kept to resume`,
              {
                details: { available_bytes: now.availableBytes, total_bytes: now.totalBytes, dir, copied_bytes: done },
              },
            ),
          );
        } else {
          fail(new LookoutError('ssh_failed', `${session.where}: writing ${partial} failed: ${err.message}`, { details: { copied_bytes: done } }));
        }
      };
      void pump().catch(fail);
    });
  } finally {
    options.progress.stop();
    await local.close();
    await session.sftpCall<void>(`closing ${partial}`, (s, cb) => s.close(handle, (err) => cb(err))).catch(() => undefined);
  }

  const expected = await localHash;
  const actual = await session.sha256(partial, options.checksumTimeoutMs);
  if (actual !== expected) {
    await session.remove(partial);
    throw new LookoutError('transfer_corrupt', `${session.where}: ${partial} has SHA-256 ${actual}, the local file ${expected}: removed, copy again`, {
      details: { expected, actual, remote: partial },
    });
  }
  await session.rename(partial, remotePath);
  return {
    file: localPath,
    remote: remotePath,
    bytes: size,
    resumed_from: from,
    sha256: expected,
    seconds: (Date.now() - startedAt) / 1000,
  };
}

function sha256OfFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (d) => hash.update(d))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}
