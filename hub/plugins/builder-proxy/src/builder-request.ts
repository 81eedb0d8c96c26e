import { LookoutError } from 'lookout/core';

/**
 * The builder URL a hub request maps to: the same `/api/...` path (each segment re-encoded, `.` and
 * `..` refused so nothing reaches outside /api on the builder) and the query as the client sent it.
 */
export function builderUrl(base: string, rest: string, query: Record<string, string | string[] | undefined>): URL {
  const segments = rest.split('/');
  if (segments.some((s) => s === '.' || s === '..')) {
    throw new LookoutError('bad_request', `/api/${rest}: a path with . or .. segments is not passed to the builder`, { details: { field: 'path' } });
  }
  const url = new URL(`api/${segments.map((s) => encodeURIComponent(s)).join('/')}`, base.endsWith('/') ? base : `${base}/`);
  for (const [k, v] of Object.entries(query)) for (const value of Array.isArray(v) ? v : v === undefined ? [] : [v]) url.searchParams.append(k, value);
  return url;
}
