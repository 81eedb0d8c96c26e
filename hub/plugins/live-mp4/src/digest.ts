import { createHash, randomBytes } from 'node:crypto';

const md5 = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex');

/** A `WWW-Authenticate: Digest …` challenge's parameters. */
export function parseChallenge(header: string): Record<string, string> | undefined {
  if (!/^Digest\s/i.test(header)) return undefined;
  const out: Record<string, string> = {};
  for (const m of header.replace(/^Digest\s+/i, '').matchAll(/([a-zA-Z]+)\s*=\s*(?:"([^"]*)"|([^\s,]+))/g)) out[m[1].toLowerCase()] = m[2] ?? m[3];
  return out;
}

/**
 * The `Authorization` header answering a Digest challenge (RFC 2617/7616, MD5), as RTSP cameras
 * take it: with qop=auth when the challenge offers it, else the RFC 2069 form.
 */
export function digestAuthorization(challenge: Record<string, string>, user: string, password: string, method: string, uri: string, nc = 1): string {
  const realm = challenge.realm ?? '';
  const nonce = challenge.nonce ?? '';
  const ha1 = md5(`${user}:${realm}:${password}`);
  const ha2 = md5(`${method}:${uri}`);
  const q = (v: string) => `"${v.replace(/["\\]/g, '')}"`;
  const parts = [`username=${q(user)}`, `realm=${q(realm)}`, `nonce=${q(nonce)}`, `uri=${q(uri)}`];
  if (challenge.qop?.split(',').some((x) => x.trim() === 'auth')) {
    const cnonce = randomBytes(8).toString('hex');
    const ncHex = nc.toString(16).padStart(8, '0');
    parts.push(`qop=auth`, `nc=${ncHex}`, `cnonce=${q(cnonce)}`, `response=${q(md5(`${ha1}:${nonce}:${ncHex}:${cnonce}:auth:${ha2}`))}`);
  } else parts.push(`response=${q(md5(`${ha1}:${nonce}:${ha2}`))}`);
  if (challenge.opaque) parts.push(`opaque=${q(challenge.opaque)}`);
  parts.push('algorithm=MD5');
  return `Digest ${parts.join(', ')}`;
}
