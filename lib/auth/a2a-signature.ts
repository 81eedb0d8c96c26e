import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LookoutError } from 'lookout/core';

/**
 * The A2A request signature (docs/a2a.md): HMAC-SHA256 under the fleet's A2A key
 * over a canonical string of the request, carried in three headers. Written so that a client needs
 * nothing but an HMAC and a SHA-256:
 *
 *   LOOKOUT-A2A-HMAC-SHA256 \n METHOD \n path \n sorted query \n hex SHA-256 of the body bytes \n timestamp \n nonce
 *
 * - METHOD upper case; path as sent, without the query (`/a2a/query`).
 * - sorted query: every parameter as `encode(name)=encode(value)` where encode is RFC 3986
 *   percent-encoding (encodeURIComponent plus `!'()*`), sorted by name then value (code units),
 *   joined with `&`; empty when there is none. A name or value with a lone surrogate has no UTF-8
 *   form, so it cannot be encoded and such a query cannot be signed.
 * - body: the exact bytes sent (the SHA-256 of nothing when there is no body).
 * - timestamp: Unix seconds, decimal; nonce: 16 to 64 of `A-Za-z0-9_-`, never reused.
 * - Headers: `X-Lookout-Timestamp`, `X-Lookout-Nonce`, `X-Lookout-Signature: v1=<64 lower-case hex>`.
 * - Optional `X-Lookout-Key-Id: <signer>` (1 to 64 of `A-Za-z0-9_.-`): the request is signed under
 *   that signer's key, derived from the fleet's A2A key (a2aSignerKey), instead of the A2A key itself.
 *   The verifier bounds the live nonces of each signer, so one signer's flood refuses that signer only.
 */
export const A2A_SCHEME = 'LOOKOUT-A2A-HMAC-SHA256';
export const A2A_HEADERS = {
  timestamp: 'x-lookout-timestamp',
  nonce: 'x-lookout-nonce',
  signature: 'x-lookout-signature',
  keyId: 'x-lookout-key-id',
} as const;
/** How far a timestamp may be from the verifier's clock, either way. */
export const A2A_WINDOW_S = 300;
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;
const SIGNATURE = /^v1=([0-9a-f]{64})$/;
const TIMESTAMP = /^\d{1,12}$/;
const KEY_ID = /^[A-Za-z0-9_.-]{1,64}$/;
/** The signer of a request signed under the A2A key itself (no X-Lookout-Key-Id): `*` is no key id's. */
export const A2A_FLEET_SIGNER = '*';

/**
 * A signer's key: base64url(HMAC-SHA256(A2A key, "a2a:signer:" + key id)), no padding, used as the
 * UTF-8 bytes of that text like the A2A key. A client given it can sign as that signer only.
 */
export function a2aSignerKey(key: string | Buffer, keyId: string): string {
  if (!KEY_ID.test(keyId)) throw new LookoutError('argument_invalid', 'an A2A key id is 1 to 64 of A-Z a-z 0-9 _ . -');
  return createHmac('sha256', key).update(`a2a:signer:${keyId}`).digest('base64url');
}

export interface A2aRequest {
  method: string;
  path: string;
  /** Query parameters as parsed (a repeated one is an array). */
  query: Record<string, string | string[] | undefined>;
  body: Buffer | Uint8Array | string;
}

export type A2aHeaders = { 'X-Lookout-Timestamp': string; 'X-Lookout-Nonce': string; 'X-Lookout-Signature': string; 'X-Lookout-Key-Id'?: string };

/** Why a request's signature was refused; each is its own 401 code on the hub. */
export type A2aRefusal = 'signature_missing' | 'signature_malformed' | 'signature_stale' | 'signature_invalid';

/** `signer`: the key id the request was signed as, or A2A_FLEET_SIGNER for the A2A key itself. */
export type A2aVerdict = { ok: true; nonce: string; timestamp: number; signer: string } | { ok: false; reason: A2aRefusal; message: string };

const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** In a `u` regular expression a surrogate pair is one code point, so this matches only a lone surrogate. */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * The first query parameter whose name or value is not well-formed Unicode (a lone surrogate, which
 * encodeURIComponent refuses with a URIError), as JSON writes its name; null when every one is.
 */
function unsignableQueryParameter(query: A2aRequest['query']): string | null {
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (LONE_SURROGATE.test(name) || (Array.isArray(value) ? value : [value]).some((v) => LONE_SURROGATE.test(v))) return JSON.stringify(name);
  }
  return null;
}

/** The sorted query of the canonical string; throws argument_invalid (400) for a query that cannot be signed (a lone surrogate). */
export function canonicalQuery(query: A2aRequest['query']): string {
  const unsignable = unsignableQueryParameter(query);
  if (unsignable !== null) {
    throw new LookoutError('argument_invalid', `query parameter ${unsignable} is not well-formed Unicode (a lone surrogate): it cannot be signed`, {
      details: { parameter: unsignable },
    });
  }
  const pairs: [string, string][] = [];
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) pairs.push([rfc3986(name), rfc3986(v)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([n, v]) => `${n}=${v}`).join('&');
}

export function canonicalA2aString(req: A2aRequest, timestamp: string, nonce: string): string {
  const bodyHash = createHash('sha256').update(req.body).digest('hex');
  return [A2A_SCHEME, req.method.toUpperCase(), req.path, canonicalQuery(req.query), bodyHash, timestamp, nonce].join('\n');
}

function mac(key: string | Buffer, canonical: string): Buffer {
  return createHmac('sha256', key).update(canonical).digest();
}

/**
 * The headers that sign `req` now (or at `nowMs`), with a fresh nonce unless one is given; with
 * `keyId`, as that signer (under a2aSignerKey(key, keyId), and the X-Lookout-Key-Id header).
 */
export function signA2a(key: string | Buffer, req: A2aRequest, nowMs = Date.now(), nonce = randomBytes(18).toString('base64url'), keyId?: string): A2aHeaders {
  const timestamp = String(Math.floor(nowMs / 1000));
  const signingKey = keyId === undefined ? key : a2aSignerKey(key, keyId);
  return {
    'X-Lookout-Timestamp': timestamp,
    'X-Lookout-Nonce': nonce,
    'X-Lookout-Signature': `v1=${mac(signingKey, canonicalA2aString(req, timestamp, nonce)).toString('hex')}`,
    ...(keyId === undefined ? {} : { 'X-Lookout-Key-Id': keyId }),
  };
}

/**
 * Checks a request's signature: form, then the time window, then the HMAC (constant time). It does
 * not check the nonce for replay: the caller claims it in its (shared) nonce cache once this passed,
 * so that unsigned requests cannot fill the cache or burn a client's nonces.
 */
export function verifyA2a(
  key: string | Buffer,
  req: A2aRequest,
  headers: Record<string, string | string[] | undefined>,
  nowMs = Date.now(),
  windowS = A2A_WINDOW_S,
): A2aVerdict {
  const get = (name: string) => headers[name];
  const given = [get(A2A_HEADERS.timestamp), get(A2A_HEADERS.nonce), get(A2A_HEADERS.signature)];
  if (given.every((h) => h === undefined)) {
    return {
      ok: false,
      reason: 'signature_missing',
      message: 'the request is not signed: X-Lookout-Timestamp, X-Lookout-Nonce and X-Lookout-Signature are required',
    };
  }
  const [timestamp, nonce, signature] = given;
  const bad = (what: string): A2aVerdict => ({ ok: false, reason: 'signature_malformed', message: `malformed signature: ${what}` });
  if (typeof timestamp !== 'string' || !TIMESTAMP.test(timestamp)) return bad('X-Lookout-Timestamp must be Unix seconds');
  if (typeof nonce !== 'string' || !NONCE.test(nonce)) return bad('X-Lookout-Nonce must be 16 to 64 of A-Z a-z 0-9 _ -');
  const hex = typeof signature === 'string' ? SIGNATURE.exec(signature)?.[1] : undefined;
  if (hex === undefined) return bad('X-Lookout-Signature must be v1=<64 lower-case hex digits>');
  const keyId = get(A2A_HEADERS.keyId);
  if (keyId !== undefined && (typeof keyId !== 'string' || !KEY_ID.test(keyId))) return bad('X-Lookout-Key-Id must be 1 to 64 of A-Z a-z 0-9 _ . -');
  const unsignable = unsignableQueryParameter(req.query);
  if (unsignable !== null) {
    // No client can have signed it (it has no UTF-8 form), and encoding it would throw.
    return { ok: false, reason: 'signature_malformed', message: `the query cannot have been signed: parameter ${unsignable} is not well-formed Unicode` };
  }
  const skew = Math.abs(nowMs / 1000 - Number(timestamp));
  if (skew > windowS) {
    return { ok: false, reason: 'signature_stale', message: `the timestamp is ${Math.round(skew)} s from the hub's clock (at most ${windowS} s)` };
  }
  const expected = mac(keyId === undefined ? key : a2aSignerKey(key, keyId), canonicalA2aString(req, timestamp, nonce));
  if (!timingSafeEqual(expected, Buffer.from(hex, 'hex'))) {
    return { ok: false, reason: 'signature_invalid', message: 'the signature does not match the request (wrong key, or the request changed after signing)' };
  }
  return { ok: true, nonce, timestamp: Number(timestamp), signer: keyId ?? A2A_FLEET_SIGNER };
}
