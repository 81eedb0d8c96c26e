/**
 * An A2A client written from the README section "Signed peer queries (A2A)" alone, with nothing but
 * node:crypto and the global fetch: no import from Lookout (a2a-plain-client.test.ts checks that
 * this file imports node:crypto only). It shows what a client developer writes in any language.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';

/** The A2A key from the fleet secret when the hub has no A2A_HMAC_KEY: HMAC-SHA256(secret, "a2a:fleet"), base64url text. */
export function a2aKeyFromFleetSecret(fleetSecret: string): string {
  return createHmac('sha256', fleetSecret).update('a2a:fleet').digest('base64url');
}

/** RFC 3986 percent-encoding: encodeURIComponent, plus ! ' ( ) * which it leaves alone. */
function encode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** Every parameter as encode(name)=encode(value), sorted by name then value (code units), joined with &. */
export function canonicalQuery(params: [string, string][]): string {
  const pairs = params.map(([n, v]) => [encode(n), encode(v)] as const);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([n, v]) => n + '=' + v).join('&');
}

export function canonicalString(method: string, path: string, params: [string, string][], body: Buffer, timestamp: string, nonce: string): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return ['LOOKOUT-A2A-HMAC-SHA256', method.toUpperCase(), path, canonicalQuery(params), bodyHash, timestamp, nonce].join('\n');
}

export interface SignedRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  canonical: string;
}

/** Signs POST /a2a/query with these parameters; `at` (Unix seconds) and `nonce` default to now and 24 random bytes. */
export function signPeerQuery(
  hubUrl: string,
  key: string,
  params: [string, string][],
  options: { body?: Buffer; at?: number; nonce?: string } = {},
): SignedRequest {
  const body = options.body ?? Buffer.alloc(0);
  const timestamp = String(options.at ?? Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? randomBytes(24).toString('base64url');
  const canonical = canonicalString('POST', '/a2a/query', params, body, timestamp, nonce);
  const signature = createHmac('sha256', key).update(canonical).digest('hex');
  return {
    // The canonical query is a valid query string: sending it is sending exactly what was signed.
    url: hubUrl + '/a2a/query?' + canonicalQuery(params),
    headers: { 'X-Lookout-Timestamp': timestamp, 'X-Lookout-Nonce': nonce, 'X-Lookout-Signature': 'v1=' + signature },
    body,
    canonical,
  };
}

export async function send(request: SignedRequest): Promise<{ status: number; body: any }> {
  const res = await fetch(request.url, { method: 'POST', headers: request.headers, body: new Uint8Array(request.body) });
  return { status: res.status, body: await res.json() };
}
