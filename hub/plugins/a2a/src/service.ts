import { serviceToken } from 'lookout/core';
import { type PeerHelloAck } from 'lookout/core/contracts';
import type { RegisteredDevice } from '../../registry/src/service.js';

/** A peer's acknowledgement as the hub received it over mTLS, with how long the query took. */
export type PeerHelloResult = PeerHelloAck & {
  rtt_ms: number;
  sidecar: string;
  /**
   * SHA-256 fingerprint (colon hex, upper case) of the certificate the sidecar presented in the
   * handshake: what the hub saw. The ack's `cert_fingerprint` is only what the device says.
   */
  tls_fingerprint: string;
};

/**
 * Peer queries from the hub to device sidecars (mTLS with the hub's certificate of the fleet CA),
 * for other hub plugins: the readiness check's cross_a2a_federation module uses it.
 */
export interface PeerQueries {
  /**
   * Sends peer_hello to the device's sidecar (the address and port of its hello). Rejects with a
   * LookoutError naming why: no sidecar announced, no hub certificate, handshake refused, timeout.
   */
  peerHello(device: RegisteredDevice, signal: AbortSignal): Promise<PeerHelloResult>;
  /** Why the hub cannot make peer queries at all (no fleet CA or hub certificate), or null. */
  problem(): string | null;
}

export const A2A_PEERS = serviceToken<PeerQueries>('a2a-peers');
