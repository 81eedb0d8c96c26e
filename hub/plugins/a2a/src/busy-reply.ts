import { reply, type LookoutError, type TaggedRouteReply } from 'lookout/core';
import { BUSY_RETRY_AFTER_S } from './signed-request.js';

/**
 * The 503 `a2a.busy` and 429 `a2a.signer_busy` as replies of their own, for their Retry-After header: a thrown error is answered
 * by the hub with its code's status and body but no header of the plugin's choosing.
 */
export function busyReply(err: LookoutError): TaggedRouteReply {
  return reply({ status: err.status, body: err.toBody(), headers: { 'Retry-After': String(BUSY_RETRY_AFTER_S) } });
}
