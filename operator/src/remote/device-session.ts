import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import type { Client } from 'ssh2';
import { LookoutError } from 'lookout/core';
import { connectSsh, RemoteSession, shellQuote, type SshTarget, type KnownHosts, type SshCredentials } from 'lookout/lib/ssh';

export { shellQuote, SFTP_NO_SUCH_FILE, type ExecResult } from 'lookout/lib/ssh';

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

/** Free space of the filesystem holding a path (OpenSSH's statvfs@openssh.com). */
export interface FreeSpace {
  availableBytes: number;
  totalBytes: number;
}

/** Below this much free space a failed write is put down to a full disk. */
const FULL_BELOW_BYTES = 128 * 1024;

/**
 * One SSH connection to a device for an operator command (lib/ssh's RemoteSession: remote commands,
 * SFTP and the device's paths under its root, `--root`), opened with the operator's settings, and
 * what the commands need beyond it: free space, checksums, atomic writes that say when the disk is full.
 */
export class DeviceSession extends RemoteSession {
  private constructor(client: Client, options: SessionOptions) {
    super(client, options.target, options.root, options.commandTimeoutMs);
  }

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
    return new DeviceSession(client, options);
  }

  get deviceId(): string {
    return this.target.deviceId;
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
    return (await this.stat(remotePath))?.size;
  }

  async readText(remotePath: string): Promise<string | undefined> {
    return (await this.readFile(remotePath))?.toString('utf8');
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
}
