import type { Element } from '@xmldom/xmldom';
import { DigestServer, type DigestVerdict } from 'lookout/core';
import { SoapFault } from '../soap/soap-fault.js';
import { NonceCache } from './nonce-cache.js';
import { findUsernameToken, verifyUsernameToken } from './ws-security.js';

/** Operations every ONVIF client calls before it knows the clock or the credentials (they also accept a token when sent). */
export const PRE_AUTH_ACTIONS = new Set(['GetSystemDateAndTime', 'GetCapabilities', 'GetServices', 'GetServiceCapabilities']);

/** A 401: the server answers it with a Digest challenge beside the SOAP fault. */
export class AuthFault extends SoapFault {
  constructor(
    message: string,
    readonly stale = false,
  ) {
    super('Sender', 'ter:NotAuthorized', message, 401);
  }
}

export const DIGEST_REALM = 'Lookout ONVIF';

export interface OnvifAuthOptions {
  user: string;
  /** Unset: no credentials asked (the plugin then listens on loopback only). */
  password: string | undefined;
  skewMs: number;
  maxNonces: number;
  now(): number;
}

/**
 * Who may call: WS-Security UsernameToken (PasswordDigest, nonce once) or HTTP Digest, either one;
 * without a password everybody (loopback only).
 */
export class OnvifAuth {
  private readonly nonces: NonceCache;
  private readonly digest: DigestServer | undefined;

  constructor(private readonly o: OnvifAuthOptions) {
    this.nonces = new NonceCache(o.maxNonces, 2 * o.skewMs);
    this.digest =
      o.password === undefined
        ? undefined
        : new DigestServer({
            realm: DIGEST_REALM,
            user: o.user,
            password: o.password,
            lifetimeMs: o.skewMs,
            maxNonces: o.maxNonces,
            offerQop: true,
            // HTTP clients open a connection per request: no binding, so every answer carries an nc.
            allowNoQop: false,
            now: () => o.now(),
          });
  }

  /** The one user name credentials are checked against. */
  get user(): string {
    return this.o.user;
  }

  get required(): boolean {
    return this.o.password !== undefined;
  }

  challenge(stale = false): string | undefined {
    return this.digest?.challenge(stale);
  }

  /**
   * What the headers alone say, before any of the body is read. HTTP Digest is decided here (the nc
   * is spent once); without a Digest header, or with a wrong one, only a small body may follow: a
   * pre-auth operation or a WS-Security token in it decides (`fault` is then the Digest's own).
   */
  checkHeaders(http: HttpRequestLine): HeaderCheck {
    if (!this.digest) return { authenticated: true };
    const verdict: DigestVerdict = this.digest.verify(http.authorization, { method: http.method, uri: http.url });
    if (verdict === 'ok') return { authenticated: true };
    if (verdict === 'absent') return { authenticated: false };
    if (verdict === 'stale') return { authenticated: false, fault: new AuthFault('Sender not authorized: the digest nonce expired', true) };
    return { authenticated: false, fault: new AuthFault('Sender not authorized: wrong HTTP Digest credentials') };
  }

  /** After the body is parsed, for a request its headers did not authenticate: throws AuthFault unless it may run. */
  checkSoap(action: string, header: Element | null, headers: HeaderCheck): void {
    if (headers.authenticated || PRE_AUTH_ACTIONS.has(action)) return;
    if (headers.fault) throw headers.fault;
    const token = findUsernameToken(header);
    if (!token) throw new AuthFault('Sender not authorized: send a WS-Security UsernameToken (PasswordDigest) or use HTTP Digest');
    try {
      verifyUsernameToken(token, { user: this.o.user, password: this.o.password!, skewMs: this.o.skewMs, nonces: this.nonces, nowMs: this.o.now() });
    } catch (err) {
      throw new AuthFault((err as Error).message);
    }
  }

  /** HTTP Digest alone (the snapshot): throws AuthFault unless the headers authenticate the request. */
  checkHttp(http: HttpRequestLine): void {
    const check = this.checkHeaders(http);
    if (check.authenticated) return;
    throw check.fault ?? new AuthFault('Sender not authorized: HTTP Digest credentials needed');
  }
}

export interface HttpRequestLine {
  authorization: string | undefined;
  method: string;
  url: string;
}

/** The headers' verdict: authenticated, or not yet (the body may still carry a token or ask a pre-auth operation). */
export interface HeaderCheck {
  authenticated: boolean;
  /** A wrong or stale HTTP Digest: the answer unless the operation needs no credentials. */
  fault?: AuthFault;
}
