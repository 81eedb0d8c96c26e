/** Why a TLS connection failed, as a code and a message for logs and errors. */
export interface TlsFailure {
  code: string;
  message: string;
}

/**
 * OpenSSL's certificate verification codes Node reports as `err.code` when the peer's certificate
 * does not verify (another CA, expired, a name it does not carry…).
 */
const VERIFY_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The TLS failure an error from a connection attempt is, or undefined when it is something else (a
 * refused or reset TCP connection): a certificate that does not verify, an alert the peer sent in
 * the handshake (it refused ours: `ERR_SSL_TLSV1_ALERT_UNKNOWN_CA`…), another TLS error of Node's.
 * These do not heal by retrying soon, unlike a broker that is away.
 */
export function tlsFailureOf(err: Error & { code?: unknown }): TlsFailure | undefined {
  const code = typeof err.code === 'string' ? err.code : undefined;
  if (code && (VERIFY_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'))) return { code, message: err.message };
  // MQTT.js's own check after the handshake (rejectUnauthorized with an unauthorized socket).
  if (err.message === 'TLS not authorized') return { code: 'TLS_NOT_AUTHORIZED', message: err.message };
  return undefined;
}
