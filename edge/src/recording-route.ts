import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LookoutError } from 'lookout/core';
import { parseRange } from 'lookout/lib/net';
import { isRecordingFileName, type RecordingFiles } from 'lookout/lib/storage';

export const RECORDINGS_PATH = '/recordings/';
/** Files sent at once; more are refused with device_busy (429): a camera's disk and uplink serve its own recording first. */
export const DEFAULT_MAX_TRANSFERS = 4;
/** A transfer whose client takes nothing for this long is ended, so that a stalled reader frees its slot. */
export const DEFAULT_TRANSFER_IDLE_MS = 30_000;

export interface RecordingRouteOptions {
  /** The recorder's folder now (undefined: the image has no recorder, or it is not running). */
  files: () => RecordingFiles | undefined;
  maxTransfers?: number;
  idleMs?: number;
}

type Send = (status: number, body: unknown, headers?: Record<string, string>) => void;

/**
 * `GET|HEAD /recordings/<file>` on the tool server: a recording file (chunk, sidecar, detection
 * log, index file: core's isRecordingFileName) of the recorder's root, read-only, so that the hub
 * plays clips with the device's token instead of its root password. The caller has passed the tool
 * server's access guard (token, Host, Origin). The name is one path segment as sent (no decoding
 * that could make a `/`), opened with O_NOFOLLOW (a symlink is refused) and must be a regular file;
 * one byte range (206, 416 outside the file), ETag and Last-Modified (If-None-Match → 304, If-Range).
 */
export function recordingRoute(options: RecordingRouteOptions): (req: IncomingMessage, res: ServerResponse, path: string, send: Send) => Promise<void> {
  const maxTransfers = options.maxTransfers ?? DEFAULT_MAX_TRANSFERS;
  const idleMs = options.idleMs ?? DEFAULT_TRANSFER_IDLE_MS;
  let transfers = 0;
  return async (req, res, path, send) => {
    const fail = (e: LookoutError, headers: Record<string, string> = {}) => send(e.status, e.toBody(), headers);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return fail(new LookoutError('method_not_allowed', `${req.method ?? ''} ${RECORDINGS_PATH}: GET and HEAD only`), { allow: 'GET, HEAD' });
    }
    const name = path.slice(RECORDINGS_PATH.length);
    if (!isRecordingFileName(name)) {
      return fail(
        new LookoutError('bad_request', 'not a recording file name (a chunk <stamp>_<seq>.h265, its .json or .dets.jsonl, or an index file)', {
          details: { field: 'path', name: name.slice(0, 160) },
        }),
      );
    }
    const files = options.files();
    if (!files) return fail(new LookoutError('service_unavailable', 'this device runs no recorder now: no recordings to serve'));
    if (transfers >= maxTransfers) {
      return fail(new LookoutError('device_busy', `${maxTransfers} recording transfers are running; retry later`), { 'retry-after': '1' });
    }
    transfers++;
    try {
      let handle: FileHandle;
      try {
        handle = await openRegular(join(files.root, name), name);
      } catch (err) {
        return fail(err as LookoutError);
      }
      await sendFile(req, res, handle, idleMs, fail);
    } finally {
      transfers--;
    }
  };
}

async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  handle: FileHandle,
  idleMs: number,
  fail: (e: LookoutError, h?: Record<string, string>) => void,
): Promise<void> {
  try {
    const { size, mtimeMs, ino } = await handle.stat();
    // Changes when the file is replaced or rewritten: a resumed download never mixes two files.
    const etag = `"${ino.toString(16)}-${size.toString(16)}-${Math.trunc(mtimeMs).toString(16)}"`;
    const common = { etag, 'last-modified': new Date(mtimeMs).toUTCString(), 'accept-ranges': 'bytes', 'cache-control': 'no-cache' };
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*')) {
      res.writeHead(304, common);
      res.end();
      return;
    }
    const ifRange = req.headers['if-range'];
    const range = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, size) : undefined;
    if (range === 'unsatisfiable') {
      return fail(
        new LookoutError('range_not_satisfiable', `the range ${req.headers.range ?? ''} is outside the ${size} bytes of the file`, { details: { size } }),
        {
          ...common,
          'content-range': `bytes */${size}`,
        },
      );
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? size - 1;
    res.writeHead(range ? 206 : 200, {
      ...common,
      'content-type': 'application/octet-stream',
      'content-length': String(size === 0 ? 0 : end - start + 1),
      ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === 'HEAD' || size === 0) {
      res.end();
      return;
    }
    res.setTimeout(idleMs, () => res.destroy());
    // From the descriptor checked to be a regular file: a name swapped for a symlink since is not followed.
    await pipeline(handle.createReadStream({ start, end, autoClose: false }), res).catch(() => undefined);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Opens a regular file of the recordings root: a symlink as the last component fails to open
 * (O_NOFOLLOW), a FIFO does not block (O_NONBLOCK), anything but a regular file is not found.
 */
async function openRegular(path: string, name: string): Promise<FileHandle> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ELOOP') throw new LookoutError('recording_not_found', `${name} is not a regular file (a symlink)`);
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new LookoutError('recording_not_found', `no recording file ${name}`);
    throw new LookoutError('recordings_unavailable', `${name} could not be opened: ${err.code ?? err.message}`);
  });
  const s = await handle.stat().catch(() => undefined);
  if (!s?.isFile()) {
    await handle.close().catch(() => undefined);
    throw new LookoutError('recording_not_found', `${name} is not a regular file`);
  }
  return handle;
}
