import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sameSecret } from 'lookout/core';

export const DIGEST_REALM = 'Lookout ONVIF';

const md5 = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex');

/**
 * HTTP Digest (RFC 7616, MD5, qop=auth) for the SOAP services and the snapshot. Server nonces are
 * stateless (issue time + HMAC under a per-process key) and live `lifetimeMs`; the nonce counts seen
 * are remembered (bounded) so that a captured Authorization header cannot be sent again.
 */
export class HttpDigest {
  private readonly key = randomBytes(32);
  /** nonce → highest nc used, in first-use order. */
  private readonly counts = new Map<string, number>();

  constructor(private readonly o: { user: string; password: string; lifetimeMs: number; maxNonces: number; now(): number }) {}

  /** The WWW-Authenticate value. Realm first and hex values: simple clients split the header on commas and '='. */
  challenge(stale = false): string {
    return `Digest realm="${DIGEST_REALM}", qop="auth", nonce="${this.nonce()}", algorithm=MD5${stale ? ', stale=true' : ''}`;
  }

  /**
   * 'ok', 'stale' (a good answer to an expired nonce: challenge again with stale=true) or 'refused'.
   * `header` is the Authorization header; `uri` the request target.
   */
  verify(header: string | undefined, method: string, uri: string): 'ok' | 'stale' | 'refused' | 'absent' {
    if (!header || !/^digest/i.test(header.trim())) return 'absent';
    const p = parseDigestHeader(header);
    const { username = '', realm, nonce = '', response = '', qop, nc = '', cnonce = '' } = p;
    if (realm !== DIGEST_REALM || (p.algorithm && p.algorithm.toUpperCase() !== 'MD5')) return 'refused';
    if (qop !== 'auth' || !/^[0-9a-f]{8}$/i.test(nc) || !cnonce) return 'refused';
    // The digested uri must be the one requested (a header lifted from another request is worthless).
    if (p.uri !== uri) return 'refused';
    const issued = this.issuedAt(nonce);
    if (issued === undefined) return 'refused';
    const ha1 = md5(`${this.o.user}:${DIGEST_REALM}:${this.o.password}`);
    const ha2 = md5(`${method}:${p.uri}`);
    const expected = md5(`${ha1}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`);
    const userOk = sameSecret(username, this.o.user);
    const responseOk = sameSecret(response.toLowerCase(), expected);
    if (!userOk || !responseOk) return 'refused';
    if (this.o.now() - issued > this.o.lifetimeMs) return 'stale';
    const count = parseInt(nc, 16);
    const last = this.counts.get(nonce);
    if (last !== undefined && count <= last) return 'refused';
    if (last === undefined && this.counts.size >= this.o.maxNonces) {
      const [oldest] = this.counts.keys();
      this.counts.delete(oldest);
    }
    this.counts.set(nonce, count);
    return 'ok';
  }

  private nonce(): string {
    const t = this.o.now().toString(16).padStart(12, '0');
    return t + createHmac('sha256', this.key).update(t).digest('hex').slice(0, 32);
  }

  private issuedAt(nonce: string): number | undefined {
    if (!/^[0-9a-f]{44}$/.test(nonce)) return undefined;
    const t = nonce.slice(0, 12);
    const mac = createHmac('sha256', this.key).update(t).digest('hex').slice(0, 32);
    if (!sameSecret(nonce.slice(12), mac)) return undefined;
    return parseInt(t, 16);
  }
}

/**
 * `Digest k=v, k="v"` → record. Tolerates a missing space after `Digest` (node-onvif-ts sends
 * `Digestusername=…`) and quoted values holding commas.
 */
export function parseDigestHeader(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  const rest = header.trim().replace(/^digest\s*/i, '');
  const re = /([a-zA-Z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*(?:,|$)/g;
  for (let m = re.exec(rest); m; m = re.exec(rest)) {
    out[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3];
  }
  return out;
}
