import { DigestServer } from 'lookout/lib/auth';

export const REALM = 'Lookout';
/** A nonce is good this long; an older one gets 401 with stale=true and the client signs again without asking the user. */
const NONCE_TTL_MS = 5 * 60_000;
/** Nonce counts remembered (qop=auth answers), as for ONVIF. */
const MAX_NONCES = 10_000;

/**
 * HTTP Digest (RFC 2617 / 7616, MD5) for RTSP, on lib/auth's DigestServer: the rules of ONVIF's Digest
 * (uri checked, nc strictly increasing per nonce, constant-time comparisons), and each nonce bound
 * to the connection it was issued on. Most RTSP clients answer without qop (RFC 2069, no nc to
 * track), so the challenge offers none; the binding is what makes a captured answer worthless on
 * any other connection. A client that does send qop=auth has its nc checked.
 */
export class DigestAuth {
  private readonly digest: DigestServer;

  constructor(user: string, password: string, now: () => number = Date.now) {
    this.digest = new DigestServer({
      realm: REALM,
      user,
      password,
      lifetimeMs: NONCE_TTL_MS,
      maxNonces: MAX_NONCES,
      offerQop: false,
      allowNoQop: true,
      now,
    });
  }

  /** The WWW-Authenticate value for a request on `connection`. */
  challenge(stale: boolean, connection: object): string {
    return this.digest.challenge(stale, connection);
  }

  /** 'ok', 'stale' (a nonce of this connection that expired: challenge again with stale=true) or 'denied'. */
  verify(method: string, uri: string, authorization: string | undefined, connection: object): 'ok' | 'stale' | 'denied' {
    const verdict = this.digest.verify(authorization, { method, uri, binding: connection });
    return verdict === 'ok' || verdict === 'stale' ? verdict : 'denied';
  }
}
