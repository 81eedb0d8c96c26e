import { DevicePortsSchema, PeerMeshStatusSchema, READINESS_ENRICHMENT_FIELDS, type PeerMeshStatus } from 'lookout/core/contracts';
import { clipReason, clipValue } from './clip-evidence.js';
import { enrichmentMissing } from './grade-kit.js';
import type { DeviceFacts, HealthAnswer, Probe } from './device-facts.js';
import type { EnrichmentField, FieldCheck, FiveMinuteCheck } from './readiness-schemas.js';

/**
 * Spec 01's five-minute readiness check on the enriched get_system_health: peer_comm_status is
 * `ok`, peer_mesh is a get_peer_mesh_status answer (its contract), listen_ports are the device's
 * ports, overlay_mount names a writable mount, cert_fingerprint_present is true. A field that fails
 * says why: the hub's `_vms_enrichment_missing` reason when it could not be obtained. Each field's
 * value and reason are the device's, clipped (clip-evidence.ts).
 */
export function fiveMinuteCheck(facts: DeviceFacts): FiveMinuteCheck {
  const checked = checkFields(facts);
  const fields = {} as Record<EnrichmentField, FieldCheck>;
  for (const f of READINESS_ENRICHMENT_FIELDS)
    fields[f] = { ok: checked.fields[f].ok, value: clipValue(checked.fields[f].value), reason: clipReason(checked.fields[f].reason) };
  return { passed: checked.passed, fields };
}

function checkFields(facts: DeviceFacts): FiveMinuteCheck {
  const fields = {} as Record<EnrichmentField, FieldCheck>;
  if (!facts.health.ok) {
    const reason = `get_system_health did not answer: ${facts.health.code}: ${facts.health.reason}`;
    for (const f of READINESS_ENRICHMENT_FIELDS) fields[f] = { ok: false, value: null, reason };
    return { passed: false, fields };
  }
  const answer = facts.health.value;
  const missing = (f: string, otherwise: string) => enrichmentMissing(answer, f) ?? otherwise;

  const mesh = peerMeshOf(answer);
  const status = answer.peer_comm_status;
  fields.peer_comm_status =
    status === 'ok'
      ? { ok: true, value: status, reason: null }
      : typeof status === 'string'
        ? { ok: false, value: status, reason: `peer_comm_status is ${status}${mesh.ok && mesh.value.reason ? `: ${mesh.value.reason}` : ''}` }
        : { ok: false, value: null, reason: missing('peer_comm_status', 'not reported') };
  fields.peer_mesh = mesh.ok ? { ok: true, value: meshSummary(mesh.value), reason: null } : { ok: false, value: answer.peer_mesh ?? null, reason: mesh.reason };

  const ports = DevicePortsSchema.safeParse(answer.listen_ports);
  fields.listen_ports = ports.success
    ? { ok: true, value: ports.data, reason: null }
    : { ok: false, value: answer.listen_ports ?? null, reason: missing('listen_ports', 'not a ports object with the tool server port') };

  const overlay = answer.overlay_mount;
  fields.overlay_mount =
    typeof overlay === 'string' && overlay.length > 0
      ? { ok: true, value: overlay, reason: null }
      : { ok: false, value: null, reason: missing('overlay_mount', 'the device reports no writable overlay mount') };

  fields.cert_fingerprint_present =
    answer.cert_fingerprint_present === true
      ? { ok: true, value: true, reason: null }
      : { ok: false, value: answer.cert_fingerprint_present ?? null, reason: missing('cert_fingerprint', 'the device reports no certificate') };

  return { passed: READINESS_ENRICHMENT_FIELDS.every((f) => fields[f].ok), fields };
}

/** The enriched answer's peer_mesh as get_peer_mesh_status's contract reads it, or why it cannot be. */
export function peerMeshOf(answer: HealthAnswer): Probe<PeerMeshStatus> {
  if (answer.peer_mesh === null || answer.peer_mesh === undefined) {
    return { ok: false, code: 'peer_mesh_missing', reason: enrichmentMissing(answer, 'peer_mesh') ?? 'no peer_mesh in the enriched health' };
  }
  const parsed = PeerMeshStatusSchema.safeParse(answer.peer_mesh);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      code: 'peer_mesh_invalid',
      reason: `get_peer_mesh_status answered outside its contract: ${issue?.path.join('.') || 'result'}: ${issue?.message ?? 'invalid'}`,
    };
  }
  return { ok: true, value: parsed.data };
}

/** What evidence keeps of a mesh status: its verdict and the peers' states, not the whole table. */
export function meshSummary(m: PeerMeshStatus): Record<string, unknown> {
  return {
    peer_comm_status: m.peer_comm_status,
    reason: m.reason,
    mesh_key_present: m.mesh_key_present,
    peer_count: m.peer_count,
    peers_up: m.peers_up,
    peers: m.peers.slice(0, 16).map((p) => ({ device_id: p.device_id, state: p.state, rtt_ms: p.rtt_ms })),
    sidecar_listening: m.sidecar.listening,
  };
}
