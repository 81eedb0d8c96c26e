import { open } from 'node:fs/promises';
import { LookoutError, reply, type TaggedRouteReply } from 'lookout/core';
import { parseRange } from 'lookout/lib/net';
import type { CachedClip } from './transcode-cache.js';

/**
 * An mp4 of the cache as HTTP answers it: ETag (If-None-Match → 304), one byte range (206 with
 * Content-Range, 416 outside the file; If-Range with another ETag gives the whole file), else the
 * whole file. The file is opened before answering: a clip evicted after that still reads to its end.
 * Resolves undefined when the file is gone (evicted between lookup and open): the caller builds it again.
 */
export async function clipReply(
  clip: CachedClip,
  headers: Record<string, string | string[] | undefined>,
  extra: Record<string, string> = {},
): Promise<TaggedRouteReply | undefined> {
  const common = {
    ETag: clip.etag,
    'Accept-Ranges': 'bytes',
    'Last-Modified': new Date(clip.mtimeMs).toUTCString(),
    // A clip's bytes never change under its URL (a chunk name is written once).
    'Cache-Control': 'private, max-age=86400',
    ...extra,
  };
  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifNoneMatch !== undefined && matchesEtag(ifNoneMatch, clip.etag)) return reply({ status: 304, body: null, headers: common });
  const ifRange = header(headers, 'if-range');
  const range = ifRange === undefined || ifRange === clip.etag ? parseRange(header(headers, 'range'), clip.size) : undefined;
  if (range === 'unsatisfiable') {
    const e = new LookoutError('range_not_satisfiable', `the range ${header(headers, 'range') ?? ''} is outside the ${clip.size} bytes of the clip`, {
      details: { size: clip.size },
    });
    return reply({ status: 416, body: e.toBody(), type: 'application/json', headers: { ...common, 'Content-Range': `bytes */${clip.size}` } });
  }
  const handle = await open(clip.path, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (!handle) return undefined;
  const start = range?.start ?? 0;
  const end = range?.end ?? clip.size - 1;
  const body = clip.size === 0 ? '' : handle.createReadStream({ start, end, autoClose: true });
  if (clip.size === 0) await handle.close();
  return reply({
    status: range ? 206 : 200,
    body,
    type: 'video/mp4',
    headers: {
      ...common,
      'Content-Length': String(clip.size === 0 ? 0 : end - start + 1),
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${clip.size}` } : {}),
    },
  });
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** `If-None-Match: "a", "b"` or `*`; weak tags compare by their opaque part. */
function matchesEtag(list: string, etag: string): boolean {
  if (list.trim() === '*') return true;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return list.split(',').some((t) => strip(t) === etag);
}
