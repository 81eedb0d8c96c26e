import { LookoutError, isLookoutError } from 'lookout/core';
import { describeTarget, type SshTarget, type SshCredentials } from 'lookout/lib/ssh';
import { DEFAULT_RECORDINGS_ROOT, type DeviceRegistry, type DeviceSshAddress } from '../../registry/src/service.js';
import { checkRecordingFileName, checkRecordingsRoot, remotePathIn } from './recording-names.js';
import type { DeviceSsh, DownloadFromOptions, LogTailRequest, LogTailResult, RemoteFile, RemoteListing } from './service.js';
import { checkLogRequest, execTail } from './log-tail.js';
import type { SshPool } from './ssh-pool.js';
import { shellList } from './shell-listing.js';
import { sftpDownload, sftpList, sftpRead, sftpResume, type OpContext } from './sftp-ops.js';

/** The most `read` returns: it is for sidecars and index files, not chunks (download those). */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

export interface DeviceSshOptions {
  registry: Pick<DeviceRegistry, 'get'>;
  credentials: SshCredentials;
  pool: SshPool;
  /** Longest silence within an operation. */
  idleTimeoutMs: number;
  /** The largest file `download` copies. */
  maxDownloadBytes: number;
  /** Told of every failure but a refused name or a missing file (the debug ring). */
  onFailure?: (deviceId: string, err: LookoutError) => void;
}

/** DeviceSsh over ssh2: names checked first, then credentials, then the device's registry entry. */
export class HubDeviceSsh implements DeviceSsh {
  constructor(private readonly options: DeviceSshOptions) {}

  get configured(): boolean {
    return this.options.credentials.configured;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `HubDeviceSsh(${this.options.credentials.kinds.join(', ') || 'not configured'}, ${this.options.pool.size} connections)`;
  }

  toJSON(): { configured: boolean; connections: number } {
    return { configured: this.configured, connections: this.options.pool.size };
  }

  recordingsRoot(deviceId: string): string {
    return this.address(deviceId).recordingsRoot;
  }

  async list(deviceId: string, via: RemoteListing, signal?: AbortSignal): Promise<RemoteFile[]> {
    if (via !== 'sftp' && via !== 'shell') throw new LookoutError('bad_request', `via: sftp or shell, not ${String(via)}`, { details: { field: 'via' } });
    return this.run(deviceId, signal, (client, root, ctx) => (via === 'sftp' ? sftpList(client, root, ctx) : shellList(client, root, ctx)));
  }

  async read(deviceId: string, name: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
    checkRecordingFileName(name);
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 1 || maxBytes > MAX_READ_BYTES) {
      throw new LookoutError('argument_invalid', `maxBytes: an integer from 1 to ${MAX_READ_BYTES}, not ${maxBytes}`, { details: { field: 'maxBytes' } });
    }
    return this.run(deviceId, signal, (client, root, ctx) => sftpRead(client, remotePathIn(root, name), name, maxBytes, ctx));
  }

  async download(deviceId: string, name: string, localPath: string, signal?: AbortSignal): Promise<{ bytes: number }> {
    checkRecordingFileName(name);
    return this.run(deviceId, signal, (client, root, ctx) =>
      sftpDownload(client, remotePathIn(root, name), name, localPath, this.options.maxDownloadBytes, ctx),
    );
  }

  async downloadFrom(
    deviceId: string,
    name: string,
    localPath: string,
    o: DownloadFromOptions,
  ): Promise<{ bytes: number; resumedFrom: number; mtimeMs: number }> {
    checkRecordingFileName(name);
    if (!Number.isSafeInteger(o.offset) || o.offset < 0 || o.offset > this.options.maxDownloadBytes) {
      throw new LookoutError('argument_invalid', `offset: an integer from 0 to ${this.options.maxDownloadBytes}, not ${o.offset}`, {
        details: { field: 'offset' },
      });
    }
    let started = false;
    return this.run(deviceId, o.signal, (client, root, ctx) => {
      // Run again on a fresh connection only before any byte: after that, the caller resumes from what came.
      if (started) throw new LookoutError('ssh_failed', `${ctx.where}: the connection closed during the read`, { details: { reason: 'closed' } });
      return sftpResume(
        client,
        remotePathIn(root, name),
        name,
        localPath,
        this.options.maxDownloadBytes,
        {
          ...o,
          onProgress: (bytes) => {
            started = true;
            o.onProgress?.(bytes);
          },
        },
        ctx,
      );
    });
  }

  async tailLog(deviceId: string, request: LogTailRequest, onData: (chunk: Buffer) => void, signal?: AbortSignal): Promise<LogTailResult> {
    checkLogRequest(request);
    let started = false;
    return this.run(deviceId, signal, (client, _root, ctx) => {
      // The pool runs an operation again on a fresh connection only when its channel would not open: never after output.
      if (started) throw new LookoutError('ssh_failed', `${ctx.where}: the connection closed during the tail`, { details: { reason: 'closed' } });
      return execTail(client, request, ctx, (chunk) => {
        started = true;
        onData(chunk);
      });
    });
  }

  private address(deviceId: string): DeviceSshAddress {
    const device = this.options.registry.get(deviceId);
    if (!device) throw new LookoutError('target_unknown', `no registered device is "${deviceId}"`, { details: { target: deviceId } });
    if (!device.ssh) {
      throw new LookoutError(
        'target_not_allowed',
        `${deviceId} is not contacted over SSH: ${device.unreachableReason ?? 'the registry gives it no SSH address'}`,
        {
          details: { target: deviceId },
        },
      );
    }
    return device.ssh;
  }

  private async run<T>(
    deviceId: string,
    signal: AbortSignal | undefined,
    op: (client: import('ssh2').Client, root: string, ctx: OpContext) => Promise<T>,
  ): Promise<T> {
    if (!this.configured) {
      throw new LookoutError('ssh_not_configured', 'no SSH credentials for devices: set DEVICE_PASSWORD or LOOKOUT_SSH_KEY_FILE in the hub environment');
    }
    const address = this.address(deviceId);
    const root = checkRecordingsRoot(address.recordingsRoot || DEFAULT_RECORDINGS_ROOT);
    const target: SshTarget = { deviceId, host: address.host, port: address.port, user: address.user, hostFromFile: address.hostFromFile };
    const ctx: OpContext = { where: describeTarget(target), idleTimeoutMs: this.options.idleTimeoutMs, signal };
    try {
      return await this.options.pool.use(target, signal, (client) => op(client, root, ctx));
    } catch (err) {
      const e = isLookoutError(err) ? err : new LookoutError('ssh_failed', `${ctx.where}: ${(err as Error).message}`, { cause: err });
      if (e.code !== 'recording_not_found' && e.code !== 'bad_request' && (e.details as { reason?: string } | undefined)?.reason !== 'cancelled') {
        this.options.onFailure?.(deviceId, e);
      }
      throw e;
    }
  }
}
