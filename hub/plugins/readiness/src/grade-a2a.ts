import { isObject } from 'lookout/core';
import { answerOf, grader } from './grade-kit.js';
import type { DeviceFacts } from './device-facts.js';
import type { ModuleResult } from './readiness-schemas.js';

/**
 * cross_a2a_federation: the hub's own peer query to the device, peer_hello over mTLS to its sidecar
 * with the hub's certificate of the fleet CA (A2A_PEERS of the a2a hub plugin), as a signed
 * /a2a/query is forwarded. Applies to every device. Graded on its own probe even when the tool
 * server did not answer: the sidecar is a separate surface. Certificates are compared with the one
 * the sidecar presented to the hub in the handshake (`tls_fingerprint`): the acknowledgement's
 * `cert_fingerprint` and get_device_identity's are only what the device says.
 *  - ready: the sidecar acknowledged, as this device, naming the certificate it presented (or none)
 *  - degraded: get_device_identity reports another certificate than the one the sidecar presented
 *  - not_ready: the hub runs no a2a plugin, or cannot make peer queries (no fleet CA or hub
 *    certificate); the query failed (no sidecar announced, handshake refused, timeout); the
 *    acknowledgement names another device, or another certificate than the one presented; the
 *    hub's query did not say which certificate was presented
 */
export function gradeCrossA2a(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'peer_hello from the hub to the device sidecar over mTLS (A2A_PEERS.peerHello)');
  const hello = facts.peerHello;
  if ('absent' in hello) return g.notReady(null, hello.absent);
  if (!hello.ok) return g.notReady({ code: hello.code }, `peer_hello failed: ${hello.code}: ${hello.reason}`);
  const ack = hello.value;
  const value = {
    device_id: ack.device_id ?? null,
    sidecar: ack.sidecar ?? null,
    caller: ack.caller ?? null,
    peer_comm_status: ack.peer_comm_status ?? null,
    peers_up: ack.peers_up ?? null,
    cert_fingerprint: ack.cert_fingerprint ?? null,
    tls_fingerprint: ack.tls_fingerprint ?? null,
    rtt_ms: ack.rtt_ms ?? null,
  };
  if (ack.device_id !== facts.deviceId) {
    return g.notReady(
      value,
      `the sidecar at ${typeof ack.sidecar === 'string' ? ack.sidecar : '?'} answered as ${JSON.stringify(ack.device_id ?? null)}, not ${facts.deviceId}`,
    );
  }
  const seen = typeof ack.tls_fingerprint === 'string' ? ack.tls_fingerprint : null;
  if (seen === null) return g.notReady(value, 'the peer query did not say which certificate the sidecar presented over TLS');
  const acked = typeof ack.cert_fingerprint === 'string' ? ack.cert_fingerprint : null;
  if (acked !== null && normalise(acked) !== normalise(seen)) {
    return g.notReady(value, `the sidecar's acknowledgement claims certificate ${acked}, but it presented ${seen} over TLS`);
  }
  const answer = answerOf(facts);
  const identity = isObject(answer) && typeof answer.cert_fingerprint === 'string' ? answer.cert_fingerprint : null;
  if (identity !== null && normalise(identity) !== normalise(seen)) {
    return g.degraded(value, `get_device_identity reports certificate ${identity}, but the sidecar presented ${seen} over TLS`);
  }
  return g.ready(value);
}

function normalise(fingerprint: string): string {
  return fingerprint.replace(/[^0-9a-f]/gi, '').toLowerCase();
}
