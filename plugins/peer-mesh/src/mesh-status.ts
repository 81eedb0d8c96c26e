import type { PeerCommStatus, PeerEntry, PeerMeshStatus } from 'lookout/core/contracts';
import { type MeshNodeCounters, emptyCounters } from './mesh-verifier.js';
import type { MeshNode } from './mesh-node.js';

export interface SidecarView {
  listening: boolean;
  port: number | null;
  problem: string | null;
  ca_fingerprint: string | null;
  queries_answered: number;
  handshakes_refused: number;
  connections_refused: number;
  handshakes_timed_out: number;
}

export interface MeshView {
  deviceId: string;
  /** Running node, or null when none runs (no key, socket not bound, one-shot mode). */
  node: MeshNode | null;
  keyPresent: boolean;
  /** Why no node runs (or what is wrong with the key file); null when it runs cleanly. */
  problem: string | null;
  /** The mesh networks in force (MESH_NETWORKS or its default); null when the mesh does not run. */
  networks: readonly string[] | null;
  sidecar: SidecarView;
  overlayMount: string | null;
  now: Date;
}

/** peer_comm_status and its reason, from the node, the peers and the sidecar (core PEER_COMM_STATUS_VALUES). */
export function commStatus(
  view: Pick<MeshView, 'node' | 'keyPresent' | 'problem' | 'sidecar'>,
  peers: PeerEntry[],
): { status: PeerCommStatus; reason: string | null } {
  if (!view.keyPresent) return { status: 'no_key', reason: view.problem ?? 'no mesh key' };
  if (!view.node || view.node.port === null) return { status: 'down', reason: view.problem ?? 'the mesh socket is closed' };
  const up = peers.filter((p) => p.state === 'up').length;
  if (peers.length > 0 && up === 0) return { status: 'isolated', reason: `${peers.length} peer(s) known, none up` };
  const notUp = peers.filter((p) => p.state !== 'up').map((p) => `${p.device_id} ${p.state}`);
  if (notUp.length > 0) return { status: 'degraded', reason: `${notUp.length} of ${peers.length} peer(s) not up: ${notUp.join(', ')}` };
  if (!view.sidecar.listening) return { status: 'degraded', reason: `the sidecar does not serve: ${view.sidecar.problem ?? 'not listening'}` };
  return { status: 'ok', reason: null };
}

export function peerEntries(node: MeshNode | null): PeerEntry[] {
  if (!node) return [];
  return node.table.list().map((p) => ({
    device_id: p.deviceId,
    address: p.address,
    mesh_port: p.meshPort,
    sidecar_port: p.sidecarPort,
    source: p.source,
    state: node.table.stateOf(p),
    last_seen_at: p.lastSeenAt === null ? null : new Date(p.lastSeenAt).toISOString(),
    rtt_ms: p.rttMs,
  }));
}

/** The get_peer_mesh_status answer: never the key, only whether there is one. */
export function meshStatus(view: MeshView): PeerMeshStatus {
  const peers = peerEntries(view.node);
  const { status, reason } = commStatus(view, peers);
  const counters: MeshNodeCounters = view.node ? { ...view.node.counters } : emptyCounters();
  return {
    device_id: view.deviceId,
    peer_comm_status: status,
    reason,
    mesh_key_present: view.keyPresent,
    listen_ports: { mesh: view.node?.port ?? null, sidecar: view.sidecar.port },
    mesh_networks: view.networks ? [...view.networks] : null,
    overlay_mount: view.overlayMount,
    peers,
    peer_count: peers.length,
    peers_up: peers.filter((p) => p.state === 'up').length,
    sidecar: { ...view.sidecar },
    counters,
    timestamp: view.now.toISOString(),
  };
}
