import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sameSecret } from 'lookout/core';

export const REALM = 'Lookout';
/** A nonce is good this long; an older one gets 401 with stale=true and the client signs again without asking the user. */
const NONCE_TTL_MS = 10 * 60_000;

const md5 = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex');

/**
 * HTTP Digest (RFC 2617 / 7616, MD5) for RTSP, as cameras do it. Nonces are stateless: a time and
 * an HMAC over it with a per-process key, so no table grows with the clients; a nonce is checked
 * for its HMAC and its age. Without qop (RFC 2069 style, what most RTSP clients send) or with
 * qop=auth.
 */
export class DigestAuth {
  private readonly key = randomBytes(32);

  constructor(
    private readonly user: string,
    private readonly password: string,
    private readonly now: () => number = Date.now,
  ) {}

  challenge(stale = false): string {
    return `Digest realm="${REALM}", nonce="${this.nonce()}", algorithm=MD5${stale ? ', stale=true' : ''}`;
  }

  /** 'ok', 'stale' (a nonce of ours that expired: challenge again with stale=true) or 'denied'. */
  verify(method: string, authorization: string | undefined): 'ok' | 'stale' | 'denied' {
    if (!authorization || !/^Digest\s/i.test(authorization)) return 'denied';
    const p = parseParams(authorization.replace(/^Digest\s+/i, ''));
    const { username, realm, nonce, uri, response } = p;
    if (!username || !nonce || !uri || !response || realm !== REALM) return 'denied';
    if (p.algorithm && p.algorithm.toUpperCase() !== 'MD5') return 'denied';
    const age = this.nonceAge(nonce);
    if (age === undefined) return 'denied';
    const ha1 = md5(`${this.user}:${REALM}:${this.password}`);
    const ha2 = md5(`${method}:${uri}`);
    let expected: string;
    if (p.qop) {
      if (p.qop !== 'auth' || !p.nc || !p.cnonce) return 'denied';
      expected = md5(`${ha1}:${nonce}:${p.nc}:${p.cnonce}:${p.qop}:${ha2}`);
    } else expected = md5(`${ha1}:${nonce}:${ha2}`);
    // Compared in constant time, the user name included (a wrong name and a wrong password look alike).
    const nameOk = sameSecret(username, this.user);
    const responseOk = sameSecret(response.toLowerCase(), expected);
    if (!nameOk || !responseOk) return 'denied';
    return age > NONCE_TTL_MS ? 'stale' : 'ok';
  }

  private nonce(): string {
    const t = this.now().toString(16);
    return `${t}.${this.mac(t)}`;
  }

  private nonceAge(nonce: string): number | undefined {
    const [t, mac] = nonce.split('.');
    if (!t || !mac || !/^[0-9a-f]{1,16}$/.test(t) || !sameSecret(mac, this.mac(t))) return undefined;
    return this.now() - parseInt(t, 16);
  }

  private mac(t: string): string {
    return createHmac('sha256', this.key).update(t).digest('base64url').slice(0, 22);
  }
}

/** `name="quoted value", name=token, …` of an Authorization header. */
export function parseParams(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([a-zA-Z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) out[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  return out;
}
