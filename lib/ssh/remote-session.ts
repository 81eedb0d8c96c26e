import { posix } from 'node:path';
import type { Client, SFTPWrapper } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { describeTarget, type SshTarget } from './ssh-connect.js';

/** SFTP's "no such file" status (draft-ietf-secsh-filexfer-02). */
export const SFTP_NO_SUCH_FILE = 2;

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A word for a POSIX shell: single-quoted, its own single quotes escaped. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Whether a failure is SFTP's "no such file": ssh2's own error, or a session call's LookoutError carrying its code. */
export function isSftpMissing(err: unknown): boolean {
  const e = err as { code?: unknown; details?: { sftp_code?: unknown } } | null | undefined;
  return e?.code === SFTP_NO_SUCH_FILE || e?.details?.sftp_code === SFTP_NO_SUCH_FILE;
}

/**
 * One SSH connection to a device, as the operator's commands and the hub's provisioning use it:
 * the device's paths under its root (`/` on a device, a folder in tests), remote commands and SFTP
 * requests, each bounded by `timeoutMs`. Every failure is a LookoutError naming the device, never a
 * credential.
 */
export class RemoteSession {
  private sftpChannel: Promise<SFTPWrapper> | undefined;

  constructor(
    readonly client: Client,
    readonly target: SshTarget,
    private readonly root: string,
    protected readonly timeoutMs: number,
  ) {
    // An error after the handshake (connection lost) rejects whatever waits; unheard it would throw.
    client.on('error', () => undefined);
  }

  get where(): string {
    return describeTarget(this.target);
  }

  /** A spec path (`/data/config/…`) on the device, under its root; never outside it. */
  path(specPath: string): string {
    const root = posix.resolve('/', this.root);
    const full = posix.resolve(root, `.${posix.resolve('/', specPath)}`);
    if (full !== root && !full.startsWith(root === '/' ? '/' : `${root}/`)) {
      throw new LookoutError('forbidden', `path "${specPath}" escapes the device root`, { details: { path: specPath } });
    }
    return full;
  }

  /** Runs a shell command on the device; resolves with its exit code and output (bounded wait). */
  exec(command: string, timeoutMs = this.timeoutMs): Promise<ExecResult> {
    return new Promise((resolve, reject) => {
      let stdout = '';
      let stderr = '';
      let finished = false;
      const fail = (err: LookoutError): void => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        reject(err);
      };
      const timer = setTimeout(
        () =>
          fail(
            new LookoutError('ssh_timeout', `${this.where}: a remote command gave no result within ${timeoutMs} ms`, { details: { timeout_ms: timeoutMs } }),
          ),
        timeoutMs,
      );
      try {
        this.client.exec(command, (err, stream) => {
          if (err) return fail(new LookoutError('ssh_failed', `${this.where}: cannot run a command: ${err.message}`));
          stream.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-1_000_000)));
          stream.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-100_000)));
          stream.on('close', (code: number | null) => {
            if (finished) return;
            finished = true;
            clearTimeout(timer);
            resolve({ code, stdout, stderr });
          });
        });
      } catch (err) {
        fail(new LookoutError('ssh_failed', `${this.where}: ${(err as Error).message}`));
      }
    });
  }

  /** Runs a command that must succeed and answers its stdout; its stderr's last lines are the message otherwise. */
  async run(command: string, what: string, timeoutMs?: number): Promise<string> {
    const result = await this.exec(command, timeoutMs);
    if (result.code !== 0) {
      const why = result.stderr.trim().split('\n').slice(-3).join('; ') || `exit ${result.code}`;
      throw new LookoutError('ssh_failed', `${this.where}: ${what} failed: ${why}`, { details: { exit_code: result.code, what } });
    }
    return result.stdout;
  }

  /** The connection's one SFTP channel, opened on first use. */
  sftp(): Promise<SFTPWrapper> {
    this.sftpChannel ??= new Promise((resolve, reject) => {
      try {
        this.client.sftp((err, sftp) => {
          if (err) return reject(new LookoutError('ssh_failed', `${this.where}: no SFTP channel: ${err.message}`, { details: { reason: 'sftp_unavailable' } }));
          sftp.on('error', () => undefined);
          resolve(sftp);
        });
      } catch (err) {
        reject(new LookoutError('ssh_failed', `${this.where}: ${(err as Error).message}`));
      }
    });
    return this.sftpChannel;
  }

  /** One SFTP request under the timeout, its failure a LookoutError (SFTP's status code kept in details.sftp_code). */
  sftpCall<T>(what: string, call: (sftp: SFTPWrapper, done: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> {
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

  /** A file's size and permission bits, or undefined when there is none. */
  async stat(remotePath: string): Promise<{ size: number; mode: number } | undefined> {
    try {
      const st = await this.sftpCall<{ size: number; mode: number }>(`stat ${remotePath}`, (sftp, done) => sftp.stat(remotePath, done));
      return { size: st.size, mode: st.mode & 0o7777 };
    } catch (err) {
      if (isSftpMissing(err)) return undefined;
      throw err;
    }
  }

  /** A file's bytes, or undefined when there is none. */
  async readFile(remotePath: string): Promise<Buffer | undefined> {
    try {
      return await this.sftpCall<Buffer>(`reading ${remotePath}`, (sftp, done) => sftp.readFile(remotePath, (err, buf) => done(err, buf)));
    } catch (err) {
      if (isSftpMissing(err)) return undefined;
      throw err;
    }
  }

  chmod(remotePath: string, mode: number): Promise<void> {
    return this.sftpCall<void>(`setting the mode of ${remotePath}`, (sftp, done) => sftp.chmod(remotePath, mode, (err) => done(err)));
  }

  /** Replaces `to` by `from` in one step (posix-rename@openssh.com; plain SFTP rename refuses an existing target). */
  rename(from: string, to: string): Promise<void> {
    return this.sftpCall<void>(`renaming ${from} to ${to}`, (sftp, done) => sftp.ext_openssh_rename(from, to, (err) => done(err)));
  }

  /** Removes a file; one that is not there is fine. */
  async remove(remotePath: string): Promise<void> {
    try {
      await this.sftpCall<void>(`removing ${remotePath}`, (sftp, done) => sftp.unlink(remotePath, (err) => done(err)));
    } catch (err) {
      if (!isSftpMissing(err)) throw err;
    }
  }

  close(): void {
    this.client.end();
  }
}
