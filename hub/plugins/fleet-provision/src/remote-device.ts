import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { Client, SFTPWrapper } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { describeTarget, type SshTarget } from 'lookout/lib/ssh';

/** SFTP's "no such file" status (draft-ietf-secsh-filexfer-02). */
const SFTP_NO_SUCH_FILE = 2;

/** What a file on the device is now, for a step to check before it acts. */
export interface RemoteFileState {
  content: Buffer;
  mode: number;
}

/**
 * One SSH connection to a device being provisioned: files under its root (`/` on a device, a
 * scratch folder in tests) read, written atomically (temp file beside the target, then
 * posix-rename, modes set on the temp file before its bytes are written) and removed. Every
 * request is bounded by `timeoutMs`; failures are LookoutErrors naming the device, never a secret.
 */
export class RemoteDevice {
  private sftpChannel: Promise<SFTPWrapper> | undefined;

  constructor(
    private readonly client: Client,
    private readonly target: SshTarget,
    private readonly root: string,
    private readonly timeoutMs: number,
  ) {
    // A connection lost after the handshake rejects the request that waits; unheard it would throw.
    client.on('error', () => undefined);
  }

  get where(): string {
    return describeTarget(this.target);
  }

  /** A spec path (`/data/config/…`) under the device's root; never outside it. */
  path(specPath: string): string {
    const root = posix.resolve('/', this.root);
    const full = posix.resolve(root, `.${posix.resolve('/', specPath)}`);
    if (full !== root && !full.startsWith(root === '/' ? '/' : `${root}/`)) {
      throw new LookoutError('forbidden', `path "${specPath}" escapes the device root`, { details: { path: specPath } });
    }
    return full;
  }

  /** The file's bytes and mode, or undefined when there is none. */
  async read(remotePath: string, maxBytes = 1024 * 1024): Promise<RemoteFileState | undefined> {
    const st = await this.call<{ size: number; mode: number } | undefined>(`stat ${remotePath}`, (sftp, done) =>
      sftp.stat(remotePath, (err, stats) => (isMissing(err) ? done(undefined, undefined) : done(err, stats))),
    );
    if (!st) return undefined;
    if (st.size > maxBytes) return { content: Buffer.alloc(0), mode: st.mode & 0o7777 };
    const content = await this.call<Buffer>(`reading ${remotePath}`, (sftp, done) => sftp.readFile(remotePath, (err, buf) => done(err, buf)));
    return { content, mode: st.mode & 0o7777 };
  }

  /** Writes a file atomically with its mode; a failed write leaves the old file and no temp file. */
  async writeAtomic(remotePath: string, data: string | Buffer, mode: number): Promise<void> {
    const dir = posix.dirname(remotePath);
    const tmp = posix.join(dir, `.${posix.basename(remotePath)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await this.mkdirs(dir);
      // The mode is the open's: a key is never readable by others, not even while it is being written.
      await this.call<void>(`writing ${tmp}`, (sftp, done) => sftp.writeFile(tmp, data, { mode }, (err) => done(err)));
      await this.call<void>(`setting the mode of ${tmp}`, (sftp, done) => sftp.chmod(tmp, mode, (err) => done(err)));
      await this.call<void>(`renaming ${tmp} to ${remotePath}`, (sftp, done) => sftp.ext_openssh_rename(tmp, remotePath, (err) => done(err)));
    } catch (err) {
      await this.remove(tmp).catch(() => undefined);
      throw err;
    }
  }

  async chmod(remotePath: string, mode: number): Promise<void> {
    await this.call<void>(`setting the mode of ${remotePath}`, (sftp, done) => sftp.chmod(remotePath, mode, (err) => done(err)));
  }

  /** Removes a file; one that is not there is fine. */
  async remove(remotePath: string): Promise<void> {
    await this.call<void>(`removing ${remotePath}`, (sftp, done) => sftp.unlink(remotePath, (err) => done(isMissing(err) ? undefined : err)));
  }

  /** Creates a folder and its parents (mode 0755), one SFTP mkdir per missing level. */
  async mkdirs(remoteDir: string): Promise<void> {
    const parts = remoteDir.split('/').filter(Boolean);
    let at = '';
    for (const part of parts) {
      at += `/${part}`;
      const path = at;
      const exists = await this.call<boolean>(`stat ${path}`, (sftp, done) =>
        sftp.stat(path, (err) => (isMissing(err) ? done(undefined, false) : done(err, true))),
      );
      if (!exists) await this.call<void>(`creating ${path}`, (sftp, done) => sftp.mkdir(path, { mode: 0o755 }, (err) => done(err)));
    }
  }

  /** Runs a shell command on the device; rejects with its stderr's last lines when it fails (bounded wait). */
  exec(command: string, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      let stderr = '';
      const timer = setTimeout(
        () =>
          reject(new LookoutError('ssh_timeout', `${this.where}: ${what}: no result within ${this.timeoutMs} ms`, { details: { timeout_ms: this.timeoutMs } })),
        this.timeoutMs,
      );
      try {
        this.client.exec(command, (err, stream) => {
          if (err) {
            clearTimeout(timer);
            return reject(new LookoutError('ssh_failed', `${this.where}: ${what}: cannot run a command: ${err.message}`));
          }
          stream.on('data', () => undefined);
          stream.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
          stream.on('close', (code: number | null) => {
            clearTimeout(timer);
            if (code === 0) return resolve();
            const why = stderr.trim().split('\n').slice(-3).join('; ') || `exit ${code}`;
            reject(new LookoutError('ssh_failed', `${this.where}: ${what} failed: ${why}`, { details: { exit_code: code, what } }));
          });
        });
      } catch (err) {
        clearTimeout(timer);
        reject(new LookoutError('ssh_failed', `${this.where}: ${(err as Error).message}`));
      }
    });
  }

  close(): void {
    this.client.end();
  }

  private sftp(): Promise<SFTPWrapper> {
    this.sftpChannel ??= new Promise((resolve, reject) => {
      try {
        this.client.sftp((err, sftp) => {
          if (err) {
            return reject(new LookoutError('ssh_failed', `${this.where}: no SFTP channel: ${err.message}`, { details: { reason: 'sftp_unavailable' } }));
          }
          sftp.on('error', () => undefined);
          resolve(sftp);
        });
      } catch (err) {
        reject(new LookoutError('ssh_failed', `${this.where}: ${(err as Error).message}`));
      }
    });
    return this.sftpChannel;
  }

  private call<T>(what: string, call: (sftp: SFTPWrapper, done: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> {
    return this.sftp().then(
      (sftp) =>
        new Promise<T>((resolve, reject) => {
          const timer = setTimeout(
            () =>
              reject(
                new LookoutError('ssh_timeout', `${this.where}: ${what}: no SFTP answer within ${this.timeoutMs} ms`, {
                  details: { timeout_ms: this.timeoutMs },
                }),
              ),
            this.timeoutMs,
          );
          call(sftp, (err, value) => {
            clearTimeout(timer);
            if (!err) return resolve(value as T);
            reject(
              new LookoutError('ssh_failed', `${this.where}: ${what}: ${err.message}`, { details: { sftp_code: (err as { code?: unknown }).code, what } }),
            );
          });
        }),
    );
  }
}

function isMissing(err: unknown): boolean {
  return (err as { code?: unknown } | null | undefined)?.code === SFTP_NO_SUCH_FILE;
}
