import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalQuery } from './a2a-signature.js';
import { deriveDeviceSecret } from './device-credentials.js';

/**
 * Signed, expiring URLs (hub/README.md, "Clips for external players"): a player that cannot send a header
 * (`<video src>`, VLC, ffplay) opens `<path>?exp=<unix s>&sig=<hex>` of a route that declares
 * `signedUrl`. The signature is HMAC-SHA256 under a key derived from the fleet secret (never the
 * hub's token, which never goes into a URL; every replica that shares the fleet secret accepts it,
 * and a restart keeps it) over:
 *
 *   LOOKOUT-URL-HMAC-SHA256 \n GET \n path \n sorted query without sig
 *
 * The query is sorted and percent-encoded as in the A2A signature (canonicalQuery), so `exp` and any
 * other parameter are covered: a URL whose path, parameters or expiry changed no longer matches.
 * A HEAD is checked as the GET it describes; no other method is ever accepted.
 */
export const SIGNED_URL_SCHEME = 'LOOKOUT-URL-HMAC-SHA256';
/** The longest lifetime a signed URL may have: a leaked URL opens one clip for at most a day. */
export const SIGNED_URL_MAX_TTL_S = 86_400;
export const SIGNED_URL_DEFAULT_TTL_S = 3_600;
const SIG = /^[0-9a-f]{64}$/;
const EXP = /^\d{1,12}$/;

/** The key signed URLs are made and checked under: derived from the fleet secret, apart from every other key. */
export function signedUrlKey(fleetSecret: string): string {
  return deriveDeviceSecret(fleetSecret, 'signed-url', 'fleet');
}

export interface SignedUrl {
  /** `path?…&exp=…&sig=…`, relative to the hub. */
  path: string;
  exp: number;
}

/** Signs `path` (as it will be sent, percent-encoded) with `query` and an expiry `ttlS` seconds after `nowS`. */
export function signUrl(key: string, path: string, nowS: number, ttlS: number, query: Record<string, string> = {}): SignedUrl {
  const exp = Math.floor(nowS) + Math.min(Math.max(1, Math.floor(ttlS)), SIGNED_URL_MAX_TTL_S);
  const signed = { ...query, exp: String(exp) };
  const sig = mac(key, path, signed);
  return { path: `${path}?${canonicalQuery({ ...signed, sig })}`, exp };
}

export type SignedUrlRefusal = 'signed_url_invalid' | 'signed_url_expired';
export type SignedUrlVerdict = { ok: true; exp: number } | { ok: false; reason: SignedUrlRefusal; message: string };

/** Whether a request carries a signature to judge (then it is judged by it alone). */
export function hasUrlSignature(query: Record<string, string | string[] | undefined>): boolean {
  return query.sig !== undefined || query.exp !== undefined;
}

/**
 * Checks a request against its URL signature: the method (GET or HEAD), the path as sent, every
 * query parameter but `sig`, an expiry in the future and no further away than the longest
 * lifetime. The MAC is compared in constant time.
 */
export function verifySignedUrl(
  key: string,
  req: { method: string; path: string; query: Record<string, string | string[] | undefined> },
  nowS: number,
): SignedUrlVerdict {
  const refuse = (reason: SignedUrlRefusal, message: string): SignedUrlVerdict => ({ ok: false, reason, message });
  const method = req.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') return refuse('signed_url_invalid', `a signed URL is good for GET and HEAD only, not ${method}`);
  const { sig, ...rest } = req.query;
  const exp = rest.exp;
  if (typeof sig !== 'string' || !SIG.test(sig)) return refuse('signed_url_invalid', 'the URL has no valid sig (64 lower-case hex digits, once)');
  if (typeof exp !== 'string' || !EXP.test(exp)) return refuse('signed_url_invalid', 'the URL has no valid exp (Unix seconds, once)');
  let expected: Buffer;
  try {
    expected = Buffer.from(mac(key, req.path, rest), 'hex');
  } catch {
    return refuse('signed_url_invalid', 'the URL’s query cannot be signed (not well-formed Unicode)');
  }
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) {
    return refuse('signed_url_invalid', 'the URL signature does not match this path and query (forged, altered, or made for another clip)');
  }
  const expS = Number(exp);
  if (expS <= nowS) return refuse('signed_url_expired', `the signed URL expired at ${new Date(expS * 1000).toISOString()}; ask the hub for a new one`);
  if (expS - nowS > SIGNED_URL_MAX_TTL_S) return refuse('signed_url_invalid', `the URL's expiry is more than ${SIGNED_URL_MAX_TTL_S} s away`);
  return { ok: true, exp: expS };
}

function mac(key: string, path: string, query: Record<string, string | string[] | undefined>): string {
  return createHmac('sha256', key)
    .update([SIGNED_URL_SCHEME, 'GET', path, canonicalQuery(query)].join('\n'))
    .digest('hex');
}
