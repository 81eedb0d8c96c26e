import { LookoutError, type PluginErrorDecl } from 'lookout/core';

/** The plugin's error codes (answered as `a2a.<code>`), with their statuses. */
export const A2A_ERRORS = [
  { code: 'signature_missing', status: 401, description: 'the request carries none of X-Lookout-Timestamp, X-Lookout-Nonce, X-Lookout-Signature' },
  {
    code: 'signature_malformed',
    status: 401,
    description: 'a signature header is missing or not in its form (timestamp: Unix seconds; nonce: 16-64 of A-Za-z0-9_-; signature: v1=<64 hex>)',
  },
  { code: 'signature_stale', status: 401, description: 'the timestamp is more than 300 s from the hub’s clock' },
  { code: 'signature_replayed', status: 401, description: 'the nonce was used already (within 600 s); sign again with a new nonce' },
  { code: 'signature_invalid', status: 401, description: 'the HMAC does not match the request (wrong key, or the request changed after signing)' },
  {
    code: 'busy',
    status: 503,
    description:
      'the hub could not record the nonce, so it did not run the request: its nonce cache is full, or its shared state (Redis) is unreachable (details.reason); retry after Retry-After seconds with a new signature',
  },
  {
    code: 'signer_busy',
    status: 429,
    description:
      'the request’s signer (its X-Lookout-Key-Id, or the A2A key itself) holds as many live nonces as it may (A2A_NONCES_PER_SIGNER); other signers are not affected; retry after Retry-After seconds with a new signature',
  },
  { code: 'no_key', status: 503, description: 'the hub has no A2A key: neither A2A_HMAC_KEY nor the fleet secret is set' },
  {
    code: 'no_client_certificate',
    status: 503,
    description: 'the hub has no usable client certificate of the fleet CA in <hub data dir>/tls/ (hub.crt, hub.key, fleet_ca.crt; `lookout certs --hub-data`)',
  },
  { code: 'no_sidecar', status: 502, description: 'the target device announced no peer sidecar port in its hello' },
  { code: 'peer_unreachable', status: 502, description: 'the target’s sidecar could not be reached, or the mutual TLS handshake failed (details.reason)' },
  { code: 'peer_timeout', status: 504, description: 'the target’s sidecar did not answer in time (A2A_PEER_TIMEOUT_MS)' },
  { code: 'peer_refused', status: 502, description: 'the target’s sidecar answered the query with an error (details.status, details.error)' },
  {
    code: 'peer_answer_invalid',
    status: 502,
    description: 'the target’s sidecar answered with something that is not a peer_hello acknowledgement from that device',
  },
] as const satisfies readonly PluginErrorDecl[];

export type A2aErrorCode = (typeof A2A_ERRORS)[number]['code'];

export function a2aError(code: A2aErrorCode, message: string, details?: Record<string, unknown>): LookoutError {
  return new LookoutError(`a2a.${code}`, message, details ? { details } : {});
}
