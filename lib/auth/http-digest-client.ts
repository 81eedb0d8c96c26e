import { randomBytes } from 'node:crypto';
import { md5Hex, parseDigestHeader } from './http-digest-server.js';

/** A `WWW-Authenticate: Digest …` challenge's parameters (names lower-cased); undefined for another scheme. */
export function parseDigestChallenge(header: string): Record<string, string> | undefined {
  if (!/^Digest\s/i.test(header)) return undefined;
  return parseDigestHeader(header);
}

/**
 * The client side of HTTP Digest (RFC 2617/7616, MD5), as the hub signs in to a device's RTSP: the
 * `Authorization` header answering `challenge`, with qop=auth when the challenge offers it, else the
 * RFC 2069 form (what DigestServer accepts where nonces are bound to the connection). `nc` counts the
 * answers given to the same nonce.
 */
export function digestAuthorization(challenge: Record<string, string>, user: string, password: string, method: string, uri: string, nc = 1): string {
  const realm = challenge.realm ?? '';
  const nonce = challenge.nonce ?? '';
  const ha1 = md5Hex(`${user}:${realm}:${password}`);
  const ha2 = md5Hex(`${method}:${uri}`);
  const q = (v: string) => `"${v.replace(/["\\]/g, '')}"`;
  const parts = [`username=${q(user)}`, `realm=${q(realm)}`, `nonce=${q(nonce)}`, `uri=${q(uri)}`];
  if (challenge.qop?.split(',').some((x) => x.trim() === 'auth')) {
    const cnonce = randomBytes(8).toString('hex');
    const ncHex = nc.toString(16).padStart(8, '0');
    parts.push(`qop=auth`, `nc=${ncHex}`, `cnonce=${q(cnonce)}`, `response=${q(md5Hex(`${ha1}:${nonce}:${ncHex}:${cnonce}:auth:${ha2}`))}`);
  } else parts.push(`response=${q(md5Hex(`${ha1}:${nonce}:${ha2}`))}`);
  if (challenge.opaque) parts.push(`opaque=${q(challenge.opaque)}`);
  parts.push('algorithm=MD5');
  return `Digest ${parts.join(', ')}`;
}
