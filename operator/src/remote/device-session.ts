import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { Client, SFTPWrapper } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { connectSsh, describeTarget, type SshTarget, type KnownHosts, type SshCredentials } from 'lookout/lib/ssh';

export interface SessionOptions {
  target: SshTarget;
  credentials: SshCredentials;
  knownHosts: KnownHosts;
  /** TCP connect, handshake and authentication together. */
  connectTimeoutMs: number;
  /** Longest wait for one remote command or SFTP request. */
  commandTimeoutMs: number;
  /** The device's filesystem root: `/` on a device, a folder in tests. */
  root: string;
}

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Free space of the filesystem holding a path (OpenSSH's statvfs@openssh.com). */
export interface FreeSpace {
  availableBytes: number;
  totalBytes: number;
}

/** Below this much free space a failed write is put down to a full disk. */
const FULL_BELOW_BYTES = 128 * 1024;

/** SFTP status codes that mean something here (draft-ietf-secsh-filexfer-02). */
export const SFTP_NO_SUCH_FILE = 2;

/**
 * One SSH connection to a device for an operator command: remote commands, SFTP and the device's
 * paths under its root (`--root`). Every wait is bounded; every failure is a LookoutError naming
 * the device, never a credential.
 */
export class DeviceSession {
  private sftpChannel: Promise<SFTPWrapper> | undefined;

  private constructor(
    readonly client: Client,
    private readonly options: SessionOptions,
  ) {}

  static async open(options: SessionOptions): Promise<DeviceSession> {
    let client: Client;
    try {
      client = await connectSsh(options.target, {
        credentials: options.credentials,
        knownHosts: options.knownHosts,
        acceptNew: false,
        timeoutMs: options.connectTimeoutMs,
        keepaliveMs: Math.max(1000, Math.floor(options.commandTimeoutMs / 3)),
      });
    } catch (err) {
      // No session at all (refused, no route, silence): the device is unreachable, which has its own exit code.
      if (err instanceof LookoutError && (err.code === 'ssh_failed' || err.code === 'ssh_timeout')) {
        throw new LookoutError(err.code, `${err.message} — the device is unreachable`, {
          cause: err,
          details: { ...(err.details as object), unreachable: true },
        });
      }
      throw err;
    }
    // An error after the handshake (connection lost) rejects whatever waits; unheard it would throw.
    client.on('error', () => undefined);
    return new DeviceSession(client, options);
  }

  get where(): string {
    return describeTarget(this.options.target);
  }

  get deviceId(): string {
    return this.options.target.deviceId;
  }

  /** A spec path (`/data/models`) on the device, under its root. */
  path(specPath: string): string {
    const root = posix.resolve('/', this.options.root);
    const full = posix.resolve(root, `.${posix.resolve('/', specPath)}`);
    if (full !== root && !full.startsWith(root === '/' ? '/' : `${root}/`)) {
      throw new LookoutError('forbidden', `path "${specPath}" escapes the device root`, { details: { path: specPath } });
    }
    return full;
  }

  /** Runs a shell command on the device; resolves with its exit code and output (bounded wait). */
  exec(command: string, timeoutMs = this.options.commandTimeoutMs): Promise<ExecResult> {
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

  /** Runs a command that must succeed; its stderr is the message otherwise. */
  async run(command: string, what: string, timeoutMs?: number): Promise<string> {
    const result = await this.exec(command, timeoutMs);
    if (result.code !== 0) {
      const why = result.stderr.trim().split('\n').slice(-3).join('; ') || `exit ${result.code}`;
      throw new LookoutError('ssh_failed', `${this.where}: ${what} failed: ${why}`, { details: { exit_code: result.code, what } });
    }
    return result.stdout;
  }

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

  /** One SFTP request under the command timeout, its failure a LookoutError (ENOENT keeps sftp's code in details). */
  sftpCall<T>(what: string, call: (sftp: SFTPWrapper, done: (err: Error | null | undefined, value?: T) => void) => void): Promise<T> {
    return this.sftp().then(
      (sftp) =>
        new Promise<T>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new LookoutError('ssh_timeout', `${this.where}: ${what}: no SFTP answer within ${this.options.commandTimeoutMs} ms`)),
            this.options.commandTimeoutMs,
          );
          call(sftp, (err, value) => {
            clearTimeout(timer);
            if (!err) return resolve(value as T);
            const code = (err as { code?: unknown }).code;
            reject(new LookoutError('ssh_failed', `${this.where}: ${what}: ${err.message}`, { details: { sftp_code: code, what } }));
          });
        }),
    );
  }

  async mkdirs(remoteDir: string): Promise<void> {
    await this.run(`mkdir -p -- ${shellQuote(remoteDir)}`, `creating ${remoteDir}`);
  }

  /** Free space where a path lives (its nearest existing folder). */
  async freeSpace(remotePath: string): Promise<FreeSpace> {
    type Statvfs = { f_bavail: number | bigint; f_frsize: number | bigint; f_blocks: number | bigint };
    const st = await this.sftpCall<Statvfs>(`free space of ${remotePath}`, (sftp, done) =>
      sftp.ext_openssh_statvfs(remotePath, (err, fs) => done(err, fs as Statvfs)),
    );
    const [bavail, frsize, blocks] = [st.f_bavail, st.f_frsize, st.f_blocks].map(Number);
    if (![bavail, frsize, blocks].every(Number.isFinite))
      throw new LookoutError('ssh_failed', `${this.where}: the device gave no usable free space for ${remotePath}`);
    return { availableBytes: bavail * frsize, totalBytes: blocks * frsize };
  }

  /** Size of a remote file, or undefined when there is none. */
  async sizeOf(remotePath: string): Promise<number | undefined> {
    try {
      const st = await this.sftpCall<{ size: number }>(`stat ${remotePath}`, (sftp, done) => sftp.stat(remotePath, done));
      return st.size;
    } catch (err) {
      if ((err as LookoutError).details && (err as LookoutError & { details: { sftp_code?: unknown } }).details.sftp_code === SFTP_NO_SUCH_FILE)
        return undefined;
      throw err;
    }
  }

  /** Replaces `to` by `from` in one step (posix-rename@openssh.com; plain SFTP rename refuses an existing target). */
  rename(from: string, to: string): Promise<void> {
    return this.sftpCall<void>(`renaming ${from} to ${to}`, (sftp, done) => sftp.ext_openssh_rename(from, to, (err) => done(err)));
  }

  async remove(remotePath: string): Promise<void> {
    try {
      await this.sftpCall<void>(`removing ${remotePath}`, (sftp, done) => sftp.unlink(remotePath, (err) => done(err)));
    } catch (err) {
      if ((err as LookoutError & { details: { sftp_code?: unknown } }).details?.sftp_code !== SFTP_NO_SUCH_FILE) throw err;
    }
  }

  async readText(remotePath: string): Promise<string | undefined> {
    try {
      const data = await this.sftpCall<Buffer>(`reading ${remotePath}`, (sftp, done) => sftp.readFile(remotePath, (err, buf) => done(err, buf)));
      return data.toString('utf8');
    } catch (err) {
      if ((err as LookoutError & { details: { sftp_code?: unknown } }).details?.sftp_code === SFTP_NO_SUCH_FILE) return undefined;
      throw err;
    }
  }

  /**
   * Writes a file atomically over SFTP: a temp file beside it, then posix-rename over the target, so
   * a reader (or a crash) sees the old content or the new one. A failed write removes the temp file.
   */
  async writeFileAtomic(remotePath: string, data: string | Buffer, mode = 0o644): Promise<void> {
    const dir = posix.dirname(remotePath);
    const tmp = posix.join(dir, `.${posix.basename(remotePath)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await this.mkdirs(dir);
      await this.sftpCall<void>(`writing ${tmp}`, (sftp, done) => sftp.writeFile(tmp, data, { mode }, (err) => done(err)));
      await this.rename(tmp, remotePath);
    } catch (err) {
      await this.remove(tmp).catch(() => undefined);
      throw await this.explainFull(err, dir);
    }
  }

  /**
   * A failure on a full disk says so, with the figures: SFTP reports ENOSPC as a bare "Failure", and
   * a command as its own stderr. Any other failure is returned as it was.
   */
  async explainFull(err: unknown, dir: string): Promise<unknown> {
    const free = await this.freeSpace(dir).catch(() => undefined);
    if (!free || free.availableBytes >= FULL_BELOW_BYTES) return err;
    return new LookoutError(
      'device_storage_full',
      `${this.where}: the disk of ${dir} is full (${free.availableBytes} of ${free.totalBytes} bytes free): ${(err as Error).message}`,
      {
        cause: err,
        details: { available_bytes: free.availableBytes, total_bytes: free.totalBytes, dir },
      },
    );
  }

  /** SHA-256 of a remote file, computed on the device (sha256sum). */
  async sha256(remotePath: string, timeoutMs?: number): Promise<string> {
    const out = await this.run(`sha256sum -b -- ${shellQuote(remotePath)}`, `checksum of ${remotePath}`, timeoutMs);
    const hash = /^([0-9a-f]{64})\b/.exec(out.trim())?.[1];
    if (!hash) throw new LookoutError('ssh_failed', `${this.where}: sha256sum gave no checksum for ${remotePath}`);
    return hash;
  }

  close(): void {
    this.client.end();
  }
}

/** A word for a POSIX shell: single-quoted, its own single quotes escaped. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
