import { serviceToken } from 'lookout/core';
import { SSH_ERRORS } from 'lookout/lib/ssh';

/** The name check every call makes (chunks, their .json and .dets.jsonl, the index files), for callers to check first. */
export { isRecordingFileName, RECORDINGS_INDEX_FILES } from './recording-names.js';

/** A file in a device's recordings root as SSH sees it. */
export interface RemoteFile {
  name: string;
  size: number;
  mtimeMs: number;
}

export type RemoteListing = 'sftp' | 'shell';

/**
 * SSH to registered devices (ssh2): root with DEVICE_PASSWORD or a key file, host keys pinned in the
 * hub's known-hosts file, every remote path confined to the device's recordings root (per device in
 * the registry file), a bounded connection pool and timeouts. Names are file names in that root,
 * never paths; anything else is refused with bad_request before a connection is made.
 *
 * Failures are LookoutErrors: bad_request (a name), ssh_not_configured, target_unknown (not in the
 * registry), target_not_allowed (no address the hub may contact), ssh_host_key_unknown,
 * ssh_host_key_changed, ssh_auth_failed, ssh_timeout, recording_not_found (no such regular file),
 * ssh_failed (anything else; `details.reason` says what: busy, sftp_unavailable, root_missing,
 * too_large, command, cancelled, protocol (the device broke the SSH or SFTP protocol)…).
 */
export interface DeviceSsh {
  /** Whether credentials are configured (else every call rejects with ssh_not_configured). */
  readonly configured: boolean;
  /** The recordings root on the device (registry file `recordings_root`, default /data/recordings); throws target_unknown for a device not in the registry. */
  recordingsRoot(deviceId: string): string;
  /** Regular files with recording names directly in the recordings root, by name: over SFTP (readdir) or with a shell listing. */
  list(deviceId: string, via: RemoteListing, signal?: AbortSignal): Promise<RemoteFile[]>;
  /** A whole small file (a sidecar), refused past maxBytes. */
  read(deviceId: string, name: string, maxBytes: number, signal?: AbortSignal): Promise<Buffer>;
  /** Copies a file to a local path over SFTP (written to a temporary name and renamed: a failed download leaves no file). */
  download(deviceId: string, name: string, localPath: string, signal?: AbortSignal): Promise<{ bytes: number }>;
  /**
   * Appends a file's bytes from `offset` (the length of a partial local copy) to `localPath` over
   * SFTP: a cut pull resumes from what it had. Every byte that came stays in `localPath`, also when
   * the read fails. Started over from 0 (the local copy truncated) when the remote file is shorter
   * than the copy or its mtime is not `mtimeMs`. Bounded like download.
   */
  downloadFrom(deviceId: string, name: string, localPath: string, o: DownloadFromOptions): Promise<{ bytes: number; resumedFrom: number; mtimeMs: number }>;
  /**
   * The last lines of a log file (`file`, one plain name) in a folder of the device, over an exec
   * channel, handed to `onData` as they come: at most `lines` lines and `maxBytes` bytes; with
   * `followMs`, then what is appended until that long has passed, `maxBytes` is reached or `signal`
   * aborts (the channel is closed then: no tail stays behind). Rejects log_not_found for a missing file or folder.
   */
  tailLog(deviceId: string, request: LogTailRequest, onData: (chunk: Buffer) => void, signal?: AbortSignal): Promise<LogTailResult>;
}

export interface DownloadFromOptions {
  offset: number;
  /** The remote mtime (ms) the partial copy was begun with, if known. */
  mtimeMs?: number;
  signal?: AbortSignal;
  /** The remote size and mtime, before any byte is read. */
  onStart?: (size: number, mtimeMs: number) => void;
  onProgress?: (bytes: number) => void;
}

export interface LogTailRequest {
  /** Absolute folder on the device. */
  dir: string;
  file: string;
  lines: number;
  maxBytes: number;
  /** Follow the file this long (ms) after its tail. */
  followMs?: number;
  /** Called once the device has found the file (before any line): a caller may start its answer then. */
  onStart?: () => void;
}

export interface LogTailResult {
  bytes: number;
  /** Cut at maxBytes. */
  truncated: boolean;
}

export const DEVICE_SSH = serviceToken<DeviceSsh>('device-ssh');

/** The codes a call of DeviceSsh rejects with (besides bad_request and target_unknown): for the routes that use it to declare. */
export const DEVICE_SSH_ERRORS = ['target_not_allowed', 'recording_not_found', ...SSH_ERRORS, 'log_not_found'] as const;
