import { constants, createWriteStream } from 'node:fs';
import { lstat, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LookoutError } from 'lookout/core';
import { deviceFolderOf } from 'lookout/lib/storage';
import type { DeviceSsh, RemoteFile, RemoteListing } from '../../device-ssh/src/service.js';

/** What the media plugin needs of a device's recordings root: DEVICE_SSH, or the local folders below. */
export type RecordingsAccess = Pick<DeviceSsh, 'list' | 'read' | 'download'>;

/**
 * Recordings read from this machine's disk: for a hub that runs beside its devices (the simulated
 * fleet of `npm start`, tests), with `LOOKOUT_MEDIA_LOCAL_RECORDINGS` a path holding `{device}`
 * (e.g. `/srv/lookout/devices/{device}/data/recordings`). Names are checked as DEVICE_SSH checks
 * them: one file name in the root, never a path. As over SFTP, only regular files count: a symlink
 * in the folder (to anywhere) is neither listed nor read, nor is a FIFO or a device.
 */
export class LocalRecordings implements RecordingsAccess {
  constructor(private readonly template: string) {}

  rootOf(deviceId: string): string {
    const root = deviceFolderOf(this.template, deviceId);
    if (root === undefined) throw new LookoutError('bad_request', `device id ${JSON.stringify(deviceId)} cannot name a folder`);
    return root;
  }

  async list(deviceId: string, _via: RemoteListing): Promise<RemoteFile[]> {
    const root = this.rootOf(deviceId);
    const names = await readdir(root).catch((err: NodeJS.ErrnoException) => {
      throw new LookoutError('recordings_unavailable', `local recordings of ${deviceId}: ${err.code ?? err.message}`);
    });
    const files: RemoteFile[] = [];
    for (const name of names) {
      const s = await lstat(join(root, name)).catch(() => undefined);
      if (s?.isFile()) files.push({ name, size: s.size, mtimeMs: s.mtimeMs });
    }
    return files;
  }

  async read(deviceId: string, name: string, maxBytes: number): Promise<Buffer> {
    const handle = await openRegular(deviceId, name, this.pathOf(deviceId, name));
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) throw new LookoutError('payload_too_large', `${name}: ${size} bytes, more than ${maxBytes}`);
      const buf = Buffer.alloc(size);
      await handle.read(buf, 0, size, 0);
      return buf;
    } finally {
      await handle.close();
    }
  }

  async download(deviceId: string, name: string, localPath: string): Promise<{ bytes: number }> {
    const path = this.pathOf(deviceId, name);
    // No folder for the device here: another source (SSH) may have it, so this is not "no such chunk".
    if (!(await stat(this.rootOf(deviceId)).catch(() => undefined))?.isDirectory()) {
      throw new LookoutError('recordings_unavailable', `no local recordings folder for ${deviceId}`);
    }
    const handle = await openRegular(deviceId, name, path);
    const tmp = `${localPath}.part`;
    try {
      // From the descriptor checked above, not the name: a symlink put there since is not followed.
      await pipeline(handle.createReadStream({ autoClose: false }), createWriteStream(tmp));
      await rename(tmp, localPath);
    } catch (err) {
      await rm(tmp, { force: true });
      throw notFound(deviceId, name, err as NodeJS.ErrnoException);
    } finally {
      await handle.close().catch(() => undefined);
    }
    return { bytes: (await stat(localPath)).size };
  }

  private pathOf(deviceId: string, name: string): string {
    if (basename(name) !== name || name === '.' || name === '..' || name.includes('\\')) {
      throw new LookoutError('bad_request', `${JSON.stringify(name)} is not a file name in the recordings root`);
    }
    return join(this.rootOf(deviceId), name);
  }
}

/**
 * Opens a regular file of the recordings folder: a symlink as the last component fails to open
 * (O_NOFOLLOW), a FIFO does not block the open (O_NONBLOCK), and anything but a regular file is
 * refused as not found, as the SFTP path refuses it.
 */
async function openRegular(deviceId: string, name: string, path: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ELOOP') throw new LookoutError('recording_not_found', `${deviceId}: ${name} is not a regular file (a symlink)`);
    throw notFound(deviceId, name, err);
  });
  try {
    if (!(await handle.stat()).isFile()) throw new LookoutError('recording_not_found', `${deviceId}: ${name} is not a regular file`);
    return handle;
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err instanceof LookoutError ? err : notFound(deviceId, name, err as NodeJS.ErrnoException);
  }
}

function notFound(deviceId: string, name: string, err: NodeJS.ErrnoException): LookoutError {
  if (err instanceof LookoutError) return err;
  return err.code === 'ENOENT'
    ? new LookoutError('recording_not_found', `${deviceId} has no ${name}`)
    : new LookoutError('recordings_unavailable', `${deviceId}/${name}: ${err.message}`);
}
