import { posix } from 'node:path';
import { CHUNK_NAME_PATTERN, LookoutError } from 'lookout/core';

/**
 * The index files a recorder keeps beside its chunks, readable over SSH by their exact names (the
 * status file starts with a dot: no pattern admits dotfiles, only this list).
 */
export const RECORDINGS_INDEX_FILES: readonly string[] = ['recent_manifest.jsonl', '.h265_status'];

const MAX_NAME_LENGTH = 160;

/**
 * Whether `name` is a file the hub may read in a recordings root: a chunk (`CHUNK_NAME_PATTERN`),
 * its sidecar `<stem>.json`, its detection log `<stem>.dets.jsonl`, or an index file. Such a name
 * is one path segment: no `/`, no `..`, no leading dot, no NUL.
 */
export function isRecordingFileName(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
  if (RECORDINGS_INDEX_FILES.includes(name)) return true;
  const stem = /^(.+)\.(?:json|dets\.jsonl)$/.exec(name)?.[1];
  return CHUNK_NAME_PATTERN.test(stem === undefined ? name : `${stem}.h265`);
}

/** Refuses anything but a recording file name, before any connection is made. */
export function checkRecordingFileName(name: string, field = 'name'): void {
  if (!isRecordingFileName(name)) {
    throw new LookoutError('bad_request', `${field}: not a recording file name (a chunk <stamp>_<seq>.h265, its .json or .dets.jsonl)`, {
      details: { field, name: typeof name === 'string' ? name.slice(0, MAX_NAME_LENGTH) : typeof name },
    });
  }
}

/** Refuses a recordings root that is not a plain absolute path (the registry checks the file's; hand-made devices too). */
export function checkRecordingsRoot(root: string): string {
  const normal = posix.normalize(root);
  if (!posix.isAbsolute(root) || root.includes('\0') || /[\n\r]/.test(root) || root.split('/').includes('..') || normal === '/') {
    throw new LookoutError('bad_request', `recordings root ${JSON.stringify(root)} is not an absolute directory path`, { details: { recordings_root: root } });
  }
  return normal.replace(/\/+$/, '');
}

/** `<root>/<name>`, checked to be directly in the root (a second line behind the name check). */
export function remotePathIn(root: string, name: string): string {
  checkRecordingFileName(name);
  const dir = checkRecordingsRoot(root);
  const full = posix.join(dir, name);
  if (posix.dirname(full) !== dir || posix.basename(full) !== name) {
    throw new LookoutError('bad_request', `name: ${JSON.stringify(name)} is not a file directly in the recordings root`, { details: { field: 'name' } });
  }
  return full;
}
