import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sameSecret } from './device-credentials.js';

export interface DigestServerOptions {
  realm: string;
  user: string;
  password: string;
  /**
   * Several users (ONVIF's user list): the password of a user name, undefined for an unknown one.
   * When given, `user` and `password` are not used.
   */
  passwordFor?: (user: string) => string | undefined;
  /** A nonce is good this long; an answer to an older one of ours is 'stale' (the client signs again without asking the user). */
  lifetimeMs: number;
  /** Nonces whose nonce count (nc) is remembered; the oldest is forgotten first. */
  maxNonces: number;
  /** Offer qop="auth" in the challenge (HTTP clients take it; many RTSP clients only know the RFC 2069 form). */
  offerQop: boolean;
  /**
   * Accept the RFC 2069 form (no qop, so no nc to track). Only safe where every nonce is bound to
   * one connection (RTSP): a captured answer is then worthless on any other connection.
   */
  allowNoQop: boolean;
  now?: () => number;
}

/** What the request itself says: the answer must have been computed for exactly this. */
export interface DigestRequest {
  method: string;
  /** The request target as received (HTTP: the path and query; RTSP: the absolute URI). */
  uri: string;
  /**
   * What the nonce is bound to (RTSP: the connection, any object standing for it); the challenge
   * must have been issued with the same.
   */
  binding?: DigestBinding;
}

export type DigestVerdict = 'ok' | 'stale' | 'refused' | 'absent';

/** A string, or an object (a connection) that stands for a random string of its own while it lives. */
export type DigestBinding = string | object;

/** MD5 of a UTF-8 string, hex: Digest's H(). */
export const md5Hex = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex');
const NONCE = /^[0-9a-f]{44}$/;

/**
 * The server side of HTTP Digest (RFC 7616/2617, MD5), one set of rules for ONVIF's HTTP and for
 * RTSP: stateless nonces (issue time + HMAC under a per-process key, over the binding too), a
 * lifetime, the digested uri equal to the request's, the nonce count strictly increasing per nonce
 * (a captured header cannot be sent again), the user name and response compared in constant time.
 */
export class DigestServer {
  private readonly key = randomBytes(32);
  /** nonce → highest nc used, in first-use order. */
  private readonly counts = new Map<string, number>();
  /**
   * Nonces issued at or before this time are refused as stale: the count of one of them had to be
   * forgotten (the table is bounded), and a forgotten count could otherwise be replayed.
   */
  private floorMs = -Infinity;
  private readonly ha1: string;
  /** Compared against when the user is unknown, so that the work done does not tell which part was wrong. */
  private readonly unknownPassword = randomBytes(16).toString('hex');
  private readonly now: () => number;
  /** The binding of each connection object: random, so that a nonce says nothing about the peer. */
  private readonly connections = new WeakMap<object, string>();

  constructor(private readonly o: DigestServerOptions) {
    this.ha1 = md5Hex(`${o.user}:${o.realm}:${o.password}`);
    this.now = o.now ?? Date.now;
  }

  /** The WWW-Authenticate value. Realm first and hex values: simple clients split the header on commas and '='. */
  challenge(stale = false, binding: DigestBinding = ''): string {
    const qop = this.o.offerQop ? ', qop="auth"' : '';
    return `Digest realm="${this.o.realm}"${qop}, nonce="${this.nonce(this.bindingOf(binding))}", algorithm=MD5${stale ? ', stale=true' : ''}`;
  }

  /** `header` is the Authorization header (undefined or another scheme: 'absent'). */
  verify(header: string | undefined, req: DigestRequest): DigestVerdict {
    if (!header || !/^digest/i.test(header.trim())) return 'absent';
    const p = parseDigestHeader(header);
    const { username = '', realm, nonce = '', uri, response = '', qop, nc = '', cnonce = '' } = p;
    if (realm !== this.o.realm || (p.algorithm && p.algorithm.toUpperCase() !== 'MD5')) return 'refused';
    // The digested uri must be the one requested (a header lifted from another request is worthless).
    if (uri !== req.uri) return 'refused';
    // One user: its HA1, computed once; several: the HA1 of the user named (a random password for an unknown one).
    const password = this.o.passwordFor?.(username);
    const ha1 = this.o.passwordFor ? md5Hex(`${username}:${this.o.realm}:${password ?? this.unknownPassword}`) : this.ha1;
    let expected: string;
    const ha2 = md5Hex(`${req.method}:${uri}`);
    if (qop !== undefined) {
      if (qop !== 'auth' || !/^[0-9a-f]{8}$/i.test(nc) || !cnonce) return 'refused';
      expected = md5Hex(`${ha1}:${nonce}:${nc}:${cnonce}:${qop}:${ha2}`);
    } else {
      if (!this.o.allowNoQop) return 'refused';
      expected = md5Hex(`${ha1}:${nonce}:${ha2}`);
    }
    const issued = this.issuedAt(nonce, this.bindingOf(req.binding ?? ''));
    if (issued === undefined) return 'refused';
    // Both compared whatever the first says, so the timing tells nothing about which one was wrong.
    const userOk = this.o.passwordFor ? password !== undefined : sameSecret(username, this.o.user);
    const responseOk = sameSecret(response.toLowerCase(), expected);
    if (!userOk || !responseOk) return 'refused';
    if (this.now() - issued > this.o.lifetimeMs || issued <= this.floorMs) return 'stale';
    if (qop === undefined) return 'ok';
    const count = parseInt(nc, 16);
    const last = this.counts.get(nonce);
    if (last !== undefined && count <= last) return 'refused';
    if (last === undefined && this.counts.size >= this.o.maxNonces) this.forgetOldest();
    this.counts.set(nonce, count);
    return 'ok';
  }

  private bindingOf(binding: DigestBinding): string {
    if (typeof binding === 'string') return binding;
    let b = this.connections.get(binding);
    if (!b) {
      b = randomBytes(12).toString('hex');
      this.connections.set(binding, b);
    }
    return b;
  }

  private forgetOldest(): void {
    const [oldest] = this.counts.keys();
    this.counts.delete(oldest);
    this.floorMs = Math.max(this.floorMs, parseInt(oldest.slice(0, 12), 16));
  }

  private nonce(binding: string): string {
    const t = this.now().toString(16).padStart(12, '0');
    return t + this.mac(t, binding);
  }

  private issuedAt(nonce: string, binding: string): number | undefined {
    if (!NONCE.test(nonce)) return undefined;
    const t = nonce.slice(0, 12);
    if (!sameSecret(nonce.slice(12), this.mac(t, binding))) return undefined;
    return parseInt(t, 16);
  }

  private mac(t: string, binding: string): string {
    return createHmac('sha256', this.key).update(`${t}\n${binding}`).digest('hex').slice(0, 32);
  }
}

/**
 * `Digest k=v, k="v"` → record, names lower-cased. Tolerates a missing space after `Digest`
 * (node-onvif-ts sends `Digestusername=…`) and quoted values holding commas.
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
