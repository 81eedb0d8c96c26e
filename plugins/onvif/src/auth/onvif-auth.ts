import type { Element } from '@xmldom/xmldom';
import { DigestServer, parseDigestHeader, type DigestVerdict } from 'lookout/lib/auth';
import type { UserLevel } from '../device/device-store.js';
import { SoapFault } from '../soap/soap-fault.js';
import { NonceCache } from './nonce-cache.js';
import { findUsernameToken, verifyUsernameToken } from './ws-security.js';

/**
 * The ONVIF Core default access policy's PRE_AUTH class: what a client may ask before it knows the
 * clock or the credentials (each also accepts a token when one is sent).
 */
export const PRE_AUTH_ACTIONS = new Set([
  'GetSystemDateAndTime',
  'GetCapabilities',
  'GetServices',
  'GetServiceCapabilities',
  'GetWsdlUrl',
  'GetHostname',
  'GetEndpointReference',
]);

/** Operations only an Administrator may call (the default access policy's WRITE_SYSTEM and UNRECOVERABLE classes). */
const ADMINISTRATOR_ACTIONS = new Set(['CreateUsers', 'DeleteUsers', 'SetUser', 'GetUsers', 'SystemReboot', 'SetScopes', 'SetNTP', 'SetSystemDateAndTime']);
/** What a User (the lowest level) may call beyond the Get… operations: reading events. */
const USER_ACTIONS = new Set(['CreatePullPointSubscription', 'PullMessages', 'SetSynchronizationPoint', 'Renew', 'Unsubscribe', 'Subscribe', 'Seek']);

/** Whether a user of `level` may call `action`; throws ter:NotAuthorized (403) otherwise. */
export function authorize(action: string, level: UserLevel): void {
  if (level === 'Administrator') return;
  if (ADMINISTRATOR_ACTIONS.has(action)) throw new SoapFault('Sender', 'ter:NotAuthorized', `Sender not authorized: ${action} needs an Administrator`, 403);
  if (level === 'Operator') return;
  if (action.startsWith('Get') || USER_ACTIONS.has(action)) return;
  throw new SoapFault('Sender', 'ter:NotAuthorized', `Sender not authorized: ${action} needs an Operator or Administrator`, 403);
}

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
  /** Unset (no ONVIF_PASSWORD): no credentials asked (the plugin then listens on loopback only). */
  required: boolean;
  /** The device's ONVIF users (the configured one and those CreateUsers added). */
  lookup(user: string): { password: string; level: UserLevel } | undefined;
  skewMs: number;
  maxNonces: number;
  /** How long the same UsernameToken may come again from the peer that first sent it (see NonceCache). */
  tokenRepeatMs: number;
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
    this.nonces = new NonceCache(o.maxNonces, 2 * o.skewMs, o.tokenRepeatMs);
    this.digest = !o.required
      ? undefined
      : new DigestServer({
          realm: DIGEST_REALM,
          user: '',
          password: '',
          passwordFor: (user) => o.lookup(user)?.password,
          lifetimeMs: o.skewMs,
          maxNonces: o.maxNonces,
          offerQop: true,
          // HTTP clients open a connection per request: no binding, so every answer carries an nc.
          allowNoQop: false,
          now: () => o.now(),
        });
  }

  get required(): boolean {
    return this.o.required;
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
    if (!this.digest) return { authenticated: true, user: '', level: 'Administrator' };
    const verdict: DigestVerdict = this.digest.verify(http.authorization, { method: http.method, uri: http.url });
    if (verdict === 'ok') {
      const user = parseDigestHeader(http.authorization ?? '').username ?? '';
      const found = this.o.lookup(user);
      if (found) return { authenticated: true, user, level: found.level };
      return { authenticated: false, fault: new AuthFault('Sender not authorized: wrong HTTP Digest credentials') };
    }
    if (verdict === 'absent') return { authenticated: false };
    if (verdict === 'stale') return { authenticated: false, fault: new AuthFault('Sender not authorized: the digest nonce expired', true) };
    return { authenticated: false, fault: new AuthFault('Sender not authorized: wrong HTTP Digest credentials') };
  }

  /**
   * After the body is parsed, for a request its headers did not authenticate: throws AuthFault unless
   * it may run, then ter:NotAuthorized (403) when the user's level does not allow the operation.
   * Answers who asks ('' for a pre-auth operation without credentials).
   */
  checkSoap(action: string, header: Element | null, headers: HeaderCheck, peer?: string): string {
    if (headers.authenticated) {
      authorize(action, headers.level ?? 'User');
      return headers.user ?? '';
    }
    if (PRE_AUTH_ACTIONS.has(action)) return '';
    if (headers.fault) throw headers.fault;
    const token = findUsernameToken(header);
    if (!token) throw new AuthFault('Sender not authorized: send a WS-Security UsernameToken (PasswordDigest) or use HTTP Digest');
    let user: string;
    try {
      user = verifyUsernameToken(token, {
        passwordFor: (u) => this.o.lookup(u)?.password,
        skewMs: this.o.skewMs,
        nonces: this.nonces,
        nowMs: this.o.now(),
        peer,
      });
    } catch (err) {
      throw new AuthFault((err as Error).message);
    }
    authorize(action, this.o.lookup(user)?.level ?? 'User');
    return user;
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
  /** Who the headers authenticated, and their level (when authenticated). */
  user?: string;
  level?: UserLevel;
  /** A wrong or stale HTTP Digest: the answer unless the operation needs no credentials. */
  fault?: AuthFault;
}
