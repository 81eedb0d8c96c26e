import type { Element } from '@xmldom/xmldom';
import { SoapFault } from '../soap/soap-fault.js';
import { HttpDigest } from './http-digest.js';
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
  private readonly digest: HttpDigest | undefined;

  constructor(private readonly o: OnvifAuthOptions) {
    this.nonces = new NonceCache(o.maxNonces, 2 * o.skewMs);
    this.digest =
      o.password === undefined
        ? undefined
        : new HttpDigest({ user: o.user, password: o.password, lifetimeMs: o.skewMs, maxNonces: o.maxNonces, now: () => o.now() });
  }

  get required(): boolean {
    return this.o.password !== undefined;
  }

  challenge(stale = false): string | undefined {
    return this.digest?.challenge(stale);
  }

  /** Throws AuthFault unless the request may run. */
  checkSoap(action: string, header: Element | null, http: { authorization: string | undefined; method: string; url: string }): void {
    if (this.o.password === undefined || PRE_AUTH_ACTIONS.has(action)) return;
    this.checkHttp(http, true);
    if (http.authorization && /^digest/i.test(http.authorization.trim())) return;
    const token = findUsernameToken(header);
    if (!token) throw new AuthFault('Sender not authorized: send a WS-Security UsernameToken (PasswordDigest) or use HTTP Digest');
    try {
      verifyUsernameToken(token, { user: this.o.user, password: this.o.password, skewMs: this.o.skewMs, nonces: this.nonces, nowMs: this.o.now() });
    } catch (err) {
      throw new AuthFault((err as Error).message);
    }
  }

  /**
   * HTTP Digest alone (the snapshot). With `optional`, a request without an Authorization header
   * passes here (the SOAP token is checked next).
   */
  checkHttp(http: { authorization: string | undefined; method: string; url: string }, optional = false): void {
    if (!this.digest) return;
    const result = this.digest.verify(http.authorization, http.method, http.url);
    if (result === 'ok' || (result === 'absent' && optional)) return;
    if (result === 'stale') throw new AuthFault('Sender not authorized: the digest nonce expired', true);
    throw new AuthFault(result === 'absent' ? 'Sender not authorized: HTTP Digest credentials needed' : 'Sender not authorized: wrong HTTP Digest credentials');
  }
}
