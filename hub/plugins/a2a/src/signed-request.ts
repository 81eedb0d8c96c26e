import { A2A_WINDOW_S, verifyA2a, type A2aRequest, type HubSharedState } from 'lookout/core';
import { a2aError } from './a2a-errors.js';

/** The HUB_SHARED scope of claimed nonces. */
export const NONCE_SCOPE = 'a2a-nonce';
/**
 * How long a claimed nonce is remembered: a timestamp passes while it is within the window either
 * side of the clock, so a nonce must outlive twice the window to be refused for all that time.
 */
export const NONCE_TTL_MS = 2 * A2A_WINDOW_S * 1000;

export interface SignedRequestDeps {
  key: string | Buffer;
  shared: Pick<HubSharedState, 'claimOnce'>;
  now?: () => number;
}

/**
 * Admits a signed request or throws the 401 naming why: missing, malformed, stale and invalid
 * signatures (core's verifyA2a, HMAC compared in constant time), then a replayed nonce. The nonce is
 * claimed only after the HMAC verified, so an unsigned flood can neither fill the shared nonce cache
 * nor burn the nonces of a real client.
 */
export async function admitSignedRequest(
  deps: SignedRequestDeps,
  request: A2aRequest,
  headers: Record<string, string | string[] | undefined>,
): Promise<{ nonce: string; timestamp: number }> {
  const verdict = verifyA2a(deps.key, request, headers, deps.now?.() ?? Date.now());
  if (!verdict.ok) throw a2aError(verdict.reason, verdict.message);
  if (!(await deps.shared.claimOnce(NONCE_SCOPE, verdict.nonce, NONCE_TTL_MS))) {
    throw a2aError('signature_replayed', 'this nonce was used already: sign the request again with a new nonce');
  }
  return { nonce: verdict.nonce, timestamp: verdict.timestamp };
}
