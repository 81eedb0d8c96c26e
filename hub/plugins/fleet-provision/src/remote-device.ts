import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { RemoteSession } from 'lookout/lib/ssh';

/** What a file on the device is now, for a step to check before it acts. */
export interface RemoteFileState {
  content: Buffer;
  mode: number;
}

/**
 * One SSH connection to a device being provisioned (lib/ssh's RemoteSession: paths under its root,
 * commands, SFTP, every request bounded): files read with their mode, and written atomically with
 * their mode set before any byte lands, folders made over SFTP.
 */
export class RemoteDevice extends RemoteSession {
  /** The file's bytes and mode, or undefined when there is none; a file over `maxBytes` comes with no bytes. */
  async read(remotePath: string, maxBytes = 1024 * 1024): Promise<RemoteFileState | undefined> {
    const st = await this.stat(remotePath);
    if (!st) return undefined;
    if (st.size > maxBytes) return { content: Buffer.alloc(0), mode: st.mode };
    const content = await this.readFile(remotePath);
    // Removed between the stat and the read: there is none.
    return content && { content, mode: st.mode };
  }

  /** Writes a file atomically with its mode (temp file beside the target, then posix-rename); a failed write leaves the old file and no temp file. */
  async writeAtomic(remotePath: string, data: string | Buffer, mode: number): Promise<void> {
    const dir = posix.dirname(remotePath);
    const tmp = posix.join(dir, `.${posix.basename(remotePath)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await this.mkdirs(dir);
      // The mode is the open's: a key is never readable by others, not even while it is being written.
      await this.sftpCall<void>(`writing ${tmp}`, (sftp, done) => sftp.writeFile(tmp, data, { mode }, (err) => done(err)));
      await this.chmod(tmp, mode);
      await this.rename(tmp, remotePath);
    } catch (err) {
      await this.remove(tmp).catch(() => undefined);
      throw err;
    }
  }

  /** Creates a folder and its parents (mode 0755), one SFTP mkdir per missing level (no shell needed). */
  async mkdirs(remoteDir: string): Promise<void> {
    let at = '';
    for (const part of remoteDir.split('/').filter(Boolean)) {
      at += `/${part}`;
      const path = at;
      if (!(await this.stat(path))) await this.sftpCall<void>(`creating ${path}`, (sftp, done) => sftp.mkdir(path, { mode: 0o755 }, (err) => done(err)));
    }
  }
}
