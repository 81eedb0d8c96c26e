import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm, stat, truncate } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import type { Client, SFTPWrapper, Stats } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { guarded } from 'lookout/lib/ssh';
import { isRecordingFileName } from './recording-names.js';
import type { RemoteFile } from './service.js';

/** SFTP status codes (draft-ietf-secsh-filexfer-02) that mean something to a caller. */
const SFTP_NO_SUCH_FILE = 2;
const SFTP_PERMISSION_DENIED = 3;
/** Bytes per SFTP read of a small file. */
const READ_BLOCK = 32 * 1024;

export interface OpContext {
  /** `cam-1 (root@127.0.0.1:22)`, for messages. */
  where: string;
  idleTimeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Opens an SFTP channel; a server without the sftp subsystem says so (reason sftp_unavailable: list
 * with the shell instead). `onError` is attached the moment the session is there and stays for its
 * life: ssh2 drops its own 'error' listener once the session is ready, and later emits 'error' for a
 * malformed packet from the device. Unheard, that throws inside ssh2's parser (ssh2 1.17 catches it
 * and ends the whole connection, the operation waiting out its timeout; nothing promises a later
 * version catches it at all).
 */
function openSftp(client: Client, ctx: OpContext, onError: (err: Error) => void): Promise<SFTPWrapper> {
  return new Promise((resolve, reject) => {
    try {
      client.sftp((err, sftp) => {
        if (!err) {
          sftp.on('error', onError);
          return resolve(sftp);
        }
        const unavailable = /subsystem/i.test(err.message);
        reject(
          new LookoutError('ssh_failed', `${ctx.where}: ${unavailable ? 'the device offers no SFTP' : 'no SFTP channel'}: ${err.message}`, {
            details: { reason: unavailable ? 'sftp_unavailable' : 'channel' },
          }),
        );
      });
    } catch (err) {
      // ssh2 throws at once when the connection is gone.
      reject(new LookoutError('ssh_failed', `${ctx.where}: ${(err as Error).message}`, { details: { reason: 'channel' } }));
    }
  });
}

/** What `work` is given besides the session: `touch` (data arrived) and whether the operation was stopped meanwhile. */
export interface SftpWork {
  touch: () => void;
  /** True once the operation was stopped (timeout, abort, a broken session) or its caller has its answer: do nothing lasting any more. */
  cancelled: () => boolean;
}

/**
 * One SFTP session for `work`, closed after it (and on timeout or abort, which also stops the work).
 * A session the device breaks (a malformed packet) fails the operation at once with ssh_failed,
 * reason protocol (the pool then drops the connection).
 */
async function withSftp<T>(client: Client, ctx: OpContext, what: string, work: (sftp: SFTPWrapper, w: SftpWork) => Promise<T>): Promise<T> {
  let sftp: SFTPWrapper | undefined;
  let cancelled = false;
  let fail: (err: LookoutError) => void = () => undefined;
  const broken = new Promise<never>((_, reject) => (fail = reject));
  // Heard through the race below, or after the operation's end, when nobody needs it.
  broken.catch(() => undefined);
  const onError = (err: Error): void => {
    cancelled = true;
    fail(
      new LookoutError('ssh_failed', `${ctx.where}: ${what}: the device broke the SFTP protocol: ${err.message}`, {
        details: { reason: 'protocol' },
      }),
    );
  };
  const stop = (): void => {
    cancelled = true;
    stopNow(sftp);
  };
  try {
    return await guarded({ what: `${ctx.where}: ${what}`, idleTimeoutMs: ctx.idleTimeoutMs, signal: ctx.signal, stop }, async (touch) => {
      const session = await openSftp(client, ctx, onError);
      sftp = session;
      if (cancelled) {
        // Stopped while the session opened (the stop found none to close), or given up on since.
        stopNow(session);
        throw new LookoutError('ssh_failed', `${ctx.where}: ${what}: cancelled`, { details: { reason: 'cancelled' } });
      }
      touch();
      return await Promise.race([work(session, { touch, cancelled: () => cancelled }), broken]);
    });
  } finally {
    // A session that opens after its caller had the answer is closed at once; a work still running stops there.
    cancelled = true;
    endQuietly(sftp);
  }
}

function endQuietly(sftp: SFTPWrapper | undefined): void {
  try {
    sftp?.end();
  } catch {
    // Already closed with its connection.
  }
}

/**
 * Stops a session at once: its close is sent, and its pending requests fail now instead of when
 * the device acknowledges the close (a hung device never does). `push(null)` is how ssh2 ends an
 * SFTP session's input; it fails every request still waiting.
 */
function stopNow(sftp: SFTPWrapper | undefined): void {
  endQuietly(sftp);
  const input = sftp as unknown as { push?: (data: null) => void } | undefined;
  try {
    input?.push?.(null);
  } catch {
    // Nothing was pending.
  }
}

function cancelledError(ctx: OpContext, name: string): LookoutError {
  return new LookoutError('ssh_failed', `${ctx.where}: download ${name}: cancelled`, { details: { reason: 'cancelled', name } });
}

function sftpError(err: Error & { code?: number | string }, ctx: OpContext, what: string, name?: string): LookoutError {
  if (err instanceof LookoutError) return err;
  if (err.code === SFTP_NO_SUCH_FILE && name !== undefined) {
    return new LookoutError('recording_not_found', `${ctx.where}: no ${name} in the recordings root`, { details: { name } });
  }
  const why = err.code === SFTP_PERMISSION_DENIED ? 'permission denied' : err.message;
  return new LookoutError('ssh_failed', `${ctx.where}: ${what}: ${why}`, { details: { reason: 'sftp', ...(name !== undefined ? { name } : {}) } });
}

function call<T>(fn: (cb: (err: Error | undefined | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value))));
}

/** The recording files directly in `root` (regular files with recording names; symlinks and others are left out). */
export function sftpList(client: Client, root: string, ctx: OpContext): Promise<RemoteFile[]> {
  return withSftp(client, ctx, `list ${root}`, async (sftp) => {
    let entries;
    try {
      entries = await call<{ filename: string; attrs: Stats }[]>((cb) => sftp.readdir(root, cb));
    } catch (err) {
      const e = err as Error & { code?: number };
      if (e.code === SFTP_NO_SUCH_FILE) {
        throw new LookoutError('ssh_failed', `${ctx.where}: the recordings root ${root} does not exist on the device`, {
          details: { reason: 'root_missing', recordings_root: root },
        });
      }
      throw sftpError(e, ctx, `list ${root}`);
    }
    return entries
      .filter((e) => e.attrs.isFile() && isRecordingFileName(e.filename))
      .map((e) => ({ name: e.filename, size: e.attrs.size, mtimeMs: e.attrs.mtime * 1000 }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  });
}

/** The size of a regular file (a symlink or directory with a recording name is refused as not found). */
async function regularFileSize(sftp: SFTPWrapper, path: string, name: string, ctx: OpContext): Promise<number> {
  return (await regularFileStats(sftp, path, name, ctx)).size;
}

async function regularFileStats(sftp: SFTPWrapper, path: string, name: string, ctx: OpContext): Promise<Stats> {
  let attrs: Stats;
  try {
    attrs = await call<Stats>((cb) => sftp.lstat(path, cb));
  } catch (err) {
    throw sftpError(err as Error, ctx, `stat ${name}`, name);
  }
  if (!attrs.isFile()) throw new LookoutError('recording_not_found', `${ctx.where}: ${name} is not a regular file`, { details: { name } });
  return attrs;
}

function tooLarge(ctx: OpContext, name: string, size: number, maxBytes: number): LookoutError {
  return new LookoutError('ssh_failed', `${ctx.where}: ${name} is ${size} bytes, more than the ${maxBytes} allowed`, {
    details: { reason: 'too_large', name, size, max_bytes: maxBytes },
  });
}

/** A whole file of at most `maxBytes` (one that grows past it while read is refused too). */
export function sftpRead(client: Client, path: string, name: string, maxBytes: number, ctx: OpContext): Promise<Buffer> {
  return withSftp(client, ctx, `read ${name}`, async (sftp, { touch }) => {
    const size = await regularFileSize(sftp, path, name, ctx);
    if (size > maxBytes) throw tooLarge(ctx, name, size, maxBytes);
    let handle: Buffer;
    try {
      handle = await call<Buffer>((cb) => sftp.open(path, 'r', cb));
    } catch (err) {
      throw sftpError(err as Error, ctx, `open ${name}`, name);
    }
    try {
      const parts: Buffer[] = [];
      let total = 0;
      for (;;) {
        const want = Math.min(READ_BLOCK, maxBytes + 1 - total);
        const buffer = Buffer.alloc(want);
        const got = await call<number>((cb) => sftp.read(handle, buffer, 0, want, total, (err, bytesRead) => cb(err, bytesRead)));
        touch();
        if (got === 0) break;
        parts.push(buffer.subarray(0, got));
        total += got;
        if (total > maxBytes) throw tooLarge(ctx, name, total, maxBytes);
      }
      return Buffer.concat(parts, total);
    } catch (err) {
      throw sftpError(err as Error, ctx, `read ${name}`, name);
    } finally {
      sftp.close(handle, () => undefined);
    }
  });
}

/**
 * Copies a file to `localPath` through a temporary `<localPath>.<random>.part` renamed when complete:
 * a failed, timed out or aborted download leaves no file, and a reader never sees a partial one.
 */
export async function sftpDownload(
  client: Client,
  path: string,
  name: string,
  localPath: string,
  maxBytes: number,
  ctx: OpContext,
): Promise<{ bytes: number }> {
  const part = `${localPath}.${randomBytes(4).toString('hex')}.part`;
  try {
    return await withSftp(client, ctx, `download ${name}`, async (sftp, { touch, cancelled }) => {
      const size = await regularFileSize(sftp, path, name, ctx);
      if (size > maxBytes) throw tooLarge(ctx, name, size, maxBytes);
      try {
        try {
          await call<void>((cb) => sftp.fastGet(path, part, { step: () => touch() }, (err) => cb(err, undefined)));
        } catch (err) {
          throw sftpError(err as Error, ctx, `download ${name}`, name);
        }
        const bytes = (await stat(part)).size;
        if (bytes > maxBytes) throw tooLarge(ctx, name, bytes, maxBytes);
        // The transfer may end after a stop that could not interrupt it, even after the caller heard
        // of the stop: the caller was told the download failed, so the part file goes, not into place.
        if (cancelled()) throw cancelledError(ctx, name);
        await rename(part, localPath);
        if (cancelled()) {
          // Stopped during the rename itself: the caller hears of a failure, so no file either.
          await rm(localPath, { force: true });
          throw cancelledError(ctx, name);
        }
        return { bytes };
      } catch (err) {
        // Here too, not only below: a work that ends after its caller had the answer cleans up after itself.
        await rm(part, { force: true }).catch(() => undefined);
        throw err;
      }
    });
  } catch (err) {
    await rm(part, { force: true }).catch(() => undefined);
    if (err instanceof LookoutError) throw err;
    throw new LookoutError('ssh_failed', `${ctx.where}: download ${name} to ${localPath}: ${(err as Error).message}`, { details: { reason: 'local', name } });
  }
}

export interface ResumeOptions {
  /** Bytes the local partial copy holds: the file is read from there. */
  offset: number;
  /** The remote file's mtime (ms) when the partial copy was begun: another one means another file, read from the start. */
  mtimeMs?: number;
  /** The remote file's size and mtime, told before any byte is read (saved with the partial copy). */
  onStart?: (size: number, mtimeMs: number) => void;
  /** Bytes the local copy holds, as they come. */
  onProgress?: (bytes: number) => void;
}

/**
 * Appends a remote file's bytes from `offset` to the partial local copy `localPath` (SFTP reads at
 * that position): a pull cut mid-file is resumed from what it had instead of from the start. Every
 * byte written stays, so a cut, timed out or aborted read leaves the longer partial file for the next
 * call. The copy starts over (the local file truncated) when the remote file is not the one the copy
 * began with: its mtime differs or it is shorter than the copy. Bounded by `maxBytes` as a download.
 */
export async function sftpResume(
  client: Client,
  path: string,
  name: string,
  localPath: string,
  maxBytes: number,
  o: ResumeOptions,
  ctx: OpContext,
): Promise<{ bytes: number; resumedFrom: number; mtimeMs: number }> {
  try {
    return await withSftp(client, ctx, `resume ${name}`, async (sftp, { touch, cancelled }) => {
      const attrs = await regularFileStats(sftp, path, name, ctx);
      if (attrs.size > maxBytes) throw tooLarge(ctx, name, attrs.size, maxBytes);
      const mtimeMs = attrs.mtime * 1000;
      const same = o.mtimeMs === undefined || o.mtimeMs === mtimeMs;
      const from = same && o.offset <= attrs.size ? o.offset : 0;
      // The local copy holds exactly `from` bytes before more are appended (a longer one came from another file).
      await truncate(localPath, from).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT' || from !== 0) throw err;
      });
      o.onStart?.(attrs.size, mtimeMs);
      if (cancelled()) throw cancelledError(ctx, name);
      let bytes = from;
      if (from < attrs.size) {
        const source = sftp.createReadStream(path, { start: from });
        source.on('data', (chunk: Buffer) => {
          touch();
          bytes += chunk.length;
          if (bytes > maxBytes) source.destroy(tooLarge(ctx, name, bytes, maxBytes));
          else o.onProgress?.(bytes);
        });
        try {
          await pipeline(source, createWriteStream(localPath, { flags: 'a' }));
        } catch (err) {
          throw sftpError(err as Error, ctx, `resume ${name} from byte ${from}`, name);
        }
      }
      const have = (await stat(localPath).catch(() => undefined))?.size ?? 0;
      if (have !== attrs.size) {
        throw new LookoutError('ssh_failed', `${ctx.where}: resume ${name}: ${have} of ${attrs.size} bytes came`, { details: { reason: 'short', name } });
      }
      return { bytes: have, resumedFrom: from, mtimeMs };
    });
  } catch (err) {
    if (err instanceof LookoutError) throw err;
    throw new LookoutError('ssh_failed', `${ctx.where}: resume ${name} into ${localPath}: ${(err as Error).message}`, { details: { reason: 'local', name } });
  }
}
