import { createHash, randomBytes } from 'node:crypto';
import type { Element } from '@xmldom/xmldom';
import { sameSecret } from 'lookout/lib/auth';
import { NS } from '../soap/namespaces.js';
import { child, childElements, text } from '../soap/soap-request.js';
import { SoapFault } from '../soap/soap-fault.js';
import type { NonceCache } from './nonce-cache.js';

const PASSWORD_DIGEST = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest';

/** xs:dateTime with any number of fraction digits (clients send milliseconds or nanoseconds) and Z or an offset. */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$/;

/** Epoch ms of an xs:dateTime (no zone means UTC, as ONVIF clients mean it); NaN when it is not one. */
export function parseDateTime(value: string): number {
  const m = DATE_TIME.exec(value.trim());
  if (!m) return NaN;
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  const ms = Number((frac + '000').slice(0, 3));
  let t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    t -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  }
  return t;
}

export interface UsernameTokenCheck {
  /** The password of a user name (undefined: no such user). */
  passwordFor(user: string): string | undefined;
  skewMs: number;
  nonces: NonceCache;
  nowMs: number;
  /** The caller's remote address: the same token again from it, at once, is libonvif's, not a replay. */
  peer?: string;
}

/** The UsernameToken of a request's Security header (undefined when the request carries none). */
export function findUsernameToken(header: Element | null): Element | undefined {
  if (!header) return undefined;
  const security = childElements(header).find((e) => e.localName === 'Security' && e.namespaceURI === NS.wsse);
  return security ? childElements(security).find((e) => e.localName === 'UsernameToken' && e.namespaceURI === NS.wsse) : undefined;
}

const refused = (why: string): SoapFault => new SoapFault('Sender', 'ter:NotAuthorized', `Sender not authorized: ${why}`, 401);

/**
 * Checks a WS-Security UsernameToken with PasswordDigest = base64(SHA1(nonce + Created + password)),
 * over the exact Created text received; Created within the skew of the device clock; each nonce once.
 * Throws ter:NotAuthorized.
 */
export function verifyUsernameToken(token: Element, check: UsernameTokenCheck): string {
  const username = text(token, 'Username') ?? '';
  const passwordEl = child(token, 'Password');
  const nonceText = text(token, 'Nonce');
  const created = text(token, 'Created');
  if (!passwordEl || nonceText === undefined || created === undefined) throw refused('the UsernameToken needs Password, Nonce and Created');
  const type = passwordEl.getAttribute('Type');
  if (type && type !== PASSWORD_DIGEST) throw refused('only PasswordDigest is accepted');
  const createdMs = parseDateTime(created);
  if (Number.isNaN(createdMs)) throw refused('Created is not a date-time');
  if (Math.abs(createdMs - check.nowMs) > check.skewMs) throw refused('Created is outside the allowed clock skew (see GetSystemDateAndTime)');
  const nonce = Buffer.from(nonceText, 'base64');
  if (nonce.length < 8) throw refused('the Nonce is too short');
  const password = check.passwordFor(username);
  // An unknown user is checked against a random password: the same work, the same answer.
  const expected = createHash('sha1')
    .update(Buffer.concat([nonce, Buffer.from(created, 'utf8'), Buffer.from(password ?? randomBytes(16).toString('hex'), 'utf8')]))
    .digest('base64');
  const given = (passwordEl.textContent ?? '').trim();
  // Both compared whatever the first says, so the timing tells nothing about which one was wrong.
  const userOk = password !== undefined;
  const digestOk = sameSecret(given, expected);
  if (!userOk || !digestOk) throw refused('wrong user name or password');
  // Only a valid token spends its nonce: garbage cannot fill the cache. The key is the nonce with the
  // exact Created: the digest covers both, so a captured token cannot be sent again, while a client that
  // keeps one nonce for a session and signs each request with a fresh Created (libonvif) still signs in
  // (and, when two of its requests share a millisecond, the cache lets the same peer repeat it at once).
  if (!check.nonces.use(`${nonce.toString('base64')} ${created}`, createdMs, check.nowMs, check.peer))
    throw refused('the nonce was already used with this Created');
  return username;
}
