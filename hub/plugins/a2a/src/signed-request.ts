import { A2A_WINDOW_S, verifyA2a, type A2aRequest } from 'lookout/lib/auth';
import type { HubSharedState } from 'lookout/hub';
import { a2aError } from './a2a-errors.js';

/** The HUB_SHARED scope of claimed nonces. */
export const NONCE_SCOPE = 'a2a-nonce';
/**
 * How long a claimed nonce is remembered: a timestamp passes while it is within the window either
 * side of the clock, so a nonce must outlive twice the window to be refused for all that time.
 */
export const NONCE_TTL_MS = 2 * A2A_WINDOW_S * 1000;
/**
 * When a client may try again after `a2a.busy`: a full cache frees the claims made one ttl ago,
 * second by second, and a lost Redis connection is retried within a couple of seconds.
 */
export const BUSY_RETRY_AFTER_S = 5;

/** Live nonces one signer (a key id, or the A2A key itself) may hold by default: about 16 signed requests a second, sustained. */
export const DEFAULT_NONCES_PER_SIGNER = 10_000;

export interface SignedRequestDeps {
  key: string | Buffer;
  shared: Pick<HubSharedState, 'claimOnce'>;
  now?: () => number;
  /** Live nonces one signer may hold (DEFAULT_NONCES_PER_SIGNER). */
  noncesPerSigner?: number;
}

/** A request whose signature verified; its nonce is not claimed yet. */
export interface VerifiedRequest {
  nonce: string;
  timestamp: number;
  /** The key id it was signed as, or A2A_FLEET_SIGNER. */
  signer: string;
}

/**
 * Checks a signed request's signature or throws naming why: missing, malformed, stale and invalid
 * signatures (core's verifyA2a, HMAC compared in constant time), each a 401. Nothing is recorded:
 * the caller checks what it can cheaply (the target) and then claims the nonce (claimNonce), so
 * that a signed request refused anyway never takes a place in the nonce cache.
 */
export function verifySignedRequest(
  deps: Pick<SignedRequestDeps, 'key' | 'now'>,
  request: A2aRequest,
  headers: Record<string, string | string[] | undefined>,
): VerifiedRequest {
  const verdict = verifyA2a(deps.key, request, headers, deps.now?.() ?? Date.now());
  if (!verdict.ok) throw a2aError(verdict.reason, verdict.message);
  return { nonce: verdict.nonce, timestamp: verdict.timestamp, signer: verdict.signer };
}

/**
 * Claims a verified request's nonce, once fleet-wide, or throws: a nonce seen before is 401
 * `signature_replayed`. The claim counts against its signer's bound, so a signer that holds as many
 * live nonces as it may is refused (429 `signer_busy`) while the others go on. A nonce that could
 * not be claimed (the cache full, Redis unreachable) is a 503 `a2a.busy`: the request is refused,
 * since one let through unclaimed could be replayed, and it is not called a replay, since nothing
 * was seen. A signer's nonces are its own (the claim key names it): no signer can use up another's.
 */
export async function claimNonce(deps: Pick<SignedRequestDeps, 'shared' | 'noncesPerSigner'>, verified: VerifiedRequest): Promise<void> {
  const max = deps.noncesPerSigner ?? DEFAULT_NONCES_PER_SIGNER;
  const claim = await deps.shared.claimOnce(NONCE_SCOPE, `${verified.signer}:${verified.nonce}`, NONCE_TTL_MS, { id: verified.signer, max });
  switch (claim) {
    case 'claimed':
      return;
    case 'already_claimed':
      throw a2aError('signature_replayed', 'this nonce was used already: sign the request again with a new nonce');
    case 'holder_full':
      throw a2aError(
        'signer_busy',
        `this signer holds ${max} live nonces, as many as it may (they are kept ${NONCE_TTL_MS / 1000} s): retry in ${BUSY_RETRY_AFTER_S} s with a new signature`,
        { reason: 'signer_nonces_full', signer: verified.signer, max, retry_after_s: BUSY_RETRY_AFTER_S },
      );
    case 'full':
      throw a2aError('busy', `the hub's nonce cache is full, so it cannot record this nonce: retry in ${BUSY_RETRY_AFTER_S} s with a new signature`, {
        reason: 'nonce_cache_full',
        retry_after_s: BUSY_RETRY_AFTER_S,
      });
    case 'unavailable':
      throw a2aError(
        'busy',
        `the hub's shared state (Redis) is unreachable, so it cannot record this nonce: retry in ${BUSY_RETRY_AFTER_S} s with a new signature`,
        { reason: 'shared_state_unavailable', retry_after_s: BUSY_RETRY_AFTER_S },
      );
  }
}

/** Verifies the signature, then claims the nonce (verifySignedRequest and claimNonce, with nothing checked between). */
export async function admitSignedRequest(
  deps: SignedRequestDeps,
  request: A2aRequest,
  headers: Record<string, string | string[] | undefined>,
): Promise<VerifiedRequest> {
  const verified = verifySignedRequest(deps, request, headers);
  await claimNonce(deps, verified);
  return verified;
}
