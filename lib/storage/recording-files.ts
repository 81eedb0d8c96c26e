import { CHUNK_NAME_PATTERN } from 'lookout/core/contracts';
import { serviceToken } from 'lookout/core';

/**
 * The index files a recorder keeps beside its chunks, readable by their exact names (the status
 * file starts with a dot: no pattern admits dotfiles, only this list).
 */
export const RECORDINGS_INDEX_FILES: readonly string[] = ['recent_manifest.jsonl', '.h265_status'];

export const MAX_RECORDING_FILE_NAME_LENGTH = 160;

/**
 * Whether `name` is a file a reader may fetch from a recordings root (the hub over SSH, the
 * device's tool server over HTTP): a chunk (`CHUNK_NAME_PATTERN`), its sidecar `<stem>.json`, its
 * detection log `<stem>.dets.jsonl`, or an index file. Such a name is one path segment: no `/`,
 * no `..`, no leading dot (a chunk being written is `.<name>.part`), no NUL.
 */
export function isRecordingFileName(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_RECORDING_FILE_NAME_LENGTH) return false;
  if (RECORDINGS_INDEX_FILES.includes(name)) return true;
  const stem = /^(.+)\.(?:json|dets\.jsonl)$/.exec(name)?.[1];
  return CHUNK_NAME_PATTERN.test(stem === undefined ? name : `${stem}.h265`);
}

/** The recordings folder a device's recorder writes, for the host to serve its files read-only. */
export interface RecordingFiles {
  /** Absolute path of the recordings root. */
  readonly root: string;
}

/** Provided by the recorder; the device's tool server serves `GET /recordings/<file>` from it. */
export const RecordingFilesToken = serviceToken<RecordingFiles>('device-recording-files');
