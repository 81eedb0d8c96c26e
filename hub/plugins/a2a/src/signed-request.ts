import { A2A_WINDOW_S, verifyA2a, type A2aRequest, type HubSharedState } from 'lookout/core';
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

export interface SignedRequestDeps {
  key: string | Buffer;
  shared: Pick<HubSharedState, 'claimOnce'>;
  now?: () => number;
}

/**
 * Admits a signed request or throws naming why: missing, malformed, stale and invalid signatures
 * (core's verifyA2a, HMAC compared in constant time), then a replayed nonce, each a 401. The nonce is
 * claimed only after the HMAC verified, so an unsigned flood can neither fill the shared nonce cache
 * nor burn the nonces of a real client. A nonce that could not be claimed (the cache full, Redis
 * unreachable) is a 503 `a2a.busy`: the request is refused, since one let through unclaimed could be
 * replayed, and it is not called a replay, since nothing was seen.
 */
export async function admitSignedRequest(
  deps: SignedRequestDeps,
  request: A2aRequest,
  headers: Record<string, string | string[] | undefined>,
): Promise<{ nonce: string; timestamp: number }> {
  const verdict = verifyA2a(deps.key, request, headers, deps.now?.() ?? Date.now());
  if (!verdict.ok) throw a2aError(verdict.reason, verdict.message);
  const claim = await deps.shared.claimOnce(NONCE_SCOPE, verdict.nonce, NONCE_TTL_MS);
  switch (claim) {
    case 'claimed':
      return { nonce: verdict.nonce, timestamp: verdict.timestamp };
    case 'already_claimed':
      throw a2aError('signature_replayed', 'this nonce was used already: sign the request again with a new nonce');
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
