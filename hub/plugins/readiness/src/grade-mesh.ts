import { answerOf, grader, pluginValue, withoutAnswer } from './grade-kit.js';
import { meshSummary, peerMeshOf } from './five-minute-check.js';
import { pluginOf, type DeviceFacts } from './device-facts.js';
import type { ModuleResult } from './readiness-schemas.js';

/**
 * hermes_mesh: the device's peer mesh (UDP, HMAC), from get_peer_mesh_status in its enriched health.
 * It applies to every device: the mesh is part of the fleet (a device without it cannot be reached
 * by its peers), so a device that lacks the tool is not_ready, not not_applicable.
 *  - ready: peer_comm_status `ok` (a mesh key, every known peer up, or none known yet)
 *  - degraded: `degraded` (some peers suspect or down, or its sidecar not serving)
 *  - not_ready: `isolated` (peers known, none up), `no_key`, `down`; no answer; no peer_mesh (the
 *    tool failed or is missing: the hub's enrichment reason); an answer outside the contract
 */
export function gradeHermesMesh(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'peer_comm_status and peers of get_peer_mesh_status (the peer_mesh of the enriched get_system_health)');
  const noAnswer = withoutAnswer(facts);
  if (noAnswer) return g.notReady(null, noAnswer);
  const mesh = peerMeshOf(answerOf(facts)!);
  const plugin = pluginOf(facts, 'peer-mesh');
  if (!mesh.ok) return g.notReady(plugin ? { plugin: pluginValue(plugin) } : null, mesh.reason);
  const m = mesh.value;
  const value = meshSummary(m);
  const notUp = m.peers.filter((p) => p.state !== 'up').map((p) => `${p.device_id} ${p.state}`);
  const why = [m.reason, notUp.length ? `peers not up: ${notUp.join(', ')}` : null].filter((s): s is string => !!s).join('; ');
  switch (m.peer_comm_status) {
    case 'ok':
      return g.ready(value);
    case 'degraded':
      return g.degraded(value, `peer_comm_status degraded${why ? `: ${why}` : ''}`);
    default:
      return g.notReady(value, `peer_comm_status ${m.peer_comm_status}${why ? `: ${why}` : ''}`);
  }
}

/**
 * peer_sidecar: the device's mTLS sidecar (8777), from the sidecar part of get_peer_mesh_status and
 * the sidecar port its hello announces (how peers and the hub find it). Applies to every device.
 *  - ready: listening, and its hello announces that port
 *  - degraded: listening, but its hello announces no sidecar port or another one (nobody finds it)
 *  - not_ready: not listening (its `problem`: no certificate, no fleet CA, port taken); no answer;
 *    no peer_mesh or one outside the contract
 */
export function gradePeerSidecar(facts: DeviceFacts): ModuleResult {
  const g = grader(facts, 'sidecar.listening, port and problem of get_peer_mesh_status, and the sidecar port of its hello');
  const noAnswer = withoutAnswer(facts);
  if (noAnswer) return g.notReady(null, noAnswer);
  const mesh = peerMeshOf(answerOf(facts)!);
  if (!mesh.ok) return g.notReady(null, mesh.reason);
  const s = mesh.value.sidecar;
  const announced = facts.registered?.ports?.sidecar ?? null;
  const value = { listening: s.listening, port: s.port, problem: s.problem, announced_port: announced, handshakes_refused: s.handshakes_refused };
  if (!s.listening) return g.notReady(value, `the sidecar is not listening: ${s.problem ?? 'no reason given'}`);
  if (announced === null)
    return g.degraded(value, `the sidecar listens on ${s.port ?? '?'} but the device's hello announces no sidecar port: peers and the hub cannot find it`);
  if (s.port !== null && announced !== s.port) return g.degraded(value, `the sidecar listens on ${s.port} but the device's hello announces ${announced}`);
  return g.ready(value);
}
