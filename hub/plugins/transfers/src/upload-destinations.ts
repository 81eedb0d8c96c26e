import { LookoutError } from 'lookout/core';

/**
 * Where the hub may upload: the configured default (LOOKOUT_TRANSFERS_UPLOAD_URL) and the prefixes
 * a request's `destination` must fall under (LOOKOUT_TRANSFERS_UPLOAD_PREFIXES). No request makes
 * the hub send a recording to a host the operator did not name: a destination is compared parsed
 * (its scheme, host and port exactly, its path under the prefix's path at a segment boundary, dot
 * segments resolved by the URL parser), and one carrying credentials is refused.
 */
export class UploadDestinations {
  private readonly prefixes: URL[];

  constructor(
    readonly defaultUrl: string | undefined,
    prefixes: string[],
  ) {
    this.prefixes = [...(defaultUrl ? [defaultUrl] : []), ...prefixes].map((p) => parseDestination(p, 'a configured upload prefix'));
  }

  get configured(): boolean {
    return this.prefixes.length > 0;
  }

  /** The destination a request names (or the default), checked; throws bad_request or target_not_allowed. */
  resolve(requested: string | undefined): string {
    if (!this.configured) {
      throw new LookoutError('service_unavailable', 'no upload destination is configured on this hub (LOOKOUT_TRANSFERS_UPLOAD_URL)');
    }
    if (requested === undefined) {
      if (this.defaultUrl === undefined)
        throw new LookoutError('bad_request', 'name a destination: no default is configured (LOOKOUT_TRANSFERS_UPLOAD_URL)', {
          details: { field: 'destination' },
        });
      return this.defaultUrl;
    }
    const url = parseDestination(requested, 'destination');
    if (!this.prefixes.some((p) => under(url, p))) {
      throw new LookoutError(
        'target_not_allowed',
        `destination ${url.origin}${url.pathname} is not under a configured upload prefix (LOOKOUT_TRANSFERS_UPLOAD_PREFIXES)`,
        {
          details: { field: 'destination' },
        },
      );
    }
    return url.href;
  }
}

function parseDestination(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new LookoutError('bad_request', `${what} is not a URL`, { details: { field: 'destination' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new LookoutError('bad_request', `${what} must be http or https`, { details: { field: 'destination' } });
  if (url.username || url.password) throw new LookoutError('bad_request', `${what} must not carry credentials`, { details: { field: 'destination' } });
  return url;
}

function under(url: URL, prefix: URL): boolean {
  if (url.origin !== prefix.origin) return false;
  if (url.pathname === prefix.pathname) return true;
  const base = prefix.pathname.endsWith('/') ? prefix.pathname : `${prefix.pathname}/`;
  return url.pathname.startsWith(base);
}
