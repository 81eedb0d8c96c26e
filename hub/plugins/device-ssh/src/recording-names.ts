import { posix } from 'node:path';
import { isRecordingFileName, MAX_RECORDING_FILE_NAME_LENGTH as MAX_NAME_LENGTH } from 'lookout/lib/storage';
import { LookoutError } from 'lookout/core';

/** The name rule is core's: the device's tool server serves the same files over HTTP. */
export { isRecordingFileName, RECORDINGS_INDEX_FILES } from 'lookout/lib/storage';

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
