import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Writes a file so that readers see the old content or the new, never a half-written one:
 * a temp file in the same folder, fsync, rename, then fsync of the folder.
 *
 * A write that fails (ENOSPC on a full disk, EIO, EDQUOT) rejects with the write's own error and
 * leaves the target as it was and no temp file behind: on a full disk a leftover temp file would
 * hold the very space the next attempt needs.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeAndSync(tmp, data, mode);
    await rename(tmp, path);
  } catch (err) {
    // Best effort: the caller needs to learn why the write failed, not why the cleanup did.
    await rm(tmp, { force: true }).catch(() => undefined);
    throw err;
  }
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}

/** Writes and fsyncs a new file; a failed write or sync is reported, not a close failing after it. */
async function writeAndSync(tmp: string, data: string | Uint8Array, mode: number): Promise<void> {
  const fh = await open(tmp, 'wx', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
  // Some filesystems (NFS) report a failed write-back only at close: it fails the write too.
  await fh.close();
}
