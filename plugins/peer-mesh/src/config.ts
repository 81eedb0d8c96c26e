import { z } from 'lookout/core';
import { LOOPBACK_NETWORK, validMeshNetworks } from './mesh-networks.js';
import { parseMeshPeers } from './peer-address.js';

/** The mesh's well-known ports (spec 01 "Peer mesh"); a simulated device takes free ones. */
export const DEFAULT_MESH_PORT = 11555;
export const DEFAULT_SIDECAR_PORT = 8777;

const ms = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** Keys of the peer-mesh plugin. Intervals are settable so that tests run in a second, not a minute. */
export const PeerMeshConfigSchema = z.object({
  MESH_KEY: z
    .string()
    .min(16)
    .max(512)
    .optional()
    .describe(
      'the fleet mesh key (at least 16 characters): introductions are HMAC-SHA256 signed with it and every pair key is derived under it; each device also needs its fleet certificate (shadow_peer.crt/.key, fleet_ca.crt), which proves who it is; unset: the file /data/config/mesh.key; never logged',
    ),
  MESH_PEERS: z
    .string()
    .max(8192)
    .refine((v) => {
      try {
        parseMeshPeers(v);
        return true;
      } catch {
        return false;
      }
    }, 'id@ipv4:port entries with unicast addresses, comma separated')
    .optional()
    .describe(
      'peers beside those found from their hello: id@host:port, comma separated (e.g. cam-2@10.0.0.12:11555); unicast addresses, not held to MESH_NETWORKS',
    ),
  MESH_NETWORKS: z
    .string()
    .max(4096)
    .refine(validMeshNetworks, 'networks in CIDR notation, comma separated (e.g. 127.0.0.0/8,192.168.1.0/24)')
    .optional()
    .describe(
      `networks a peer's address may be in, CIDRs comma separated: a hello's address outside them (or multicast, broadcast, 0.0.0.0) is never used, nor a datagram from outside them; unset: ${LOOPBACK_NETWORK} plus the network of the interface holding the listen address (listening on 0.0.0.0: of every interface)`,
    ),
  MESH_HEARTBEAT_MS: ms(50, 600_000).default(2000).describe('how often each peer gets a heartbeat'),
  MESH_SUSPECT_MS: ms(100, 3_600_000).optional().describe('a peer silent this long is suspect (default 3 heartbeats)'),
  MESH_DOWN_MS: ms(200, 3_600_000).optional().describe('a peer silent this long is down (default 5 heartbeats, at least the suspect time)'),
  MESH_DROP_MS: ms(200, 86_400_000)
    .optional()
    .describe(
      'a peer found by hello and silent this long leaves the table until it speaks again (default 30 heartbeats, at least the down time); configured peers stay',
    ),
  MESH_WINDOW_MS: ms(1000, 600_000).default(30_000).describe('a datagram whose timestamp is further than this from the clock is stale'),
  MESH_MAX_PEERS: ms(1, 4096).default(64).describe('peer table size; past it a new peer replaces the longest-down one learned from a hello, or is refused'),
  MESH_MAX_RATE: ms(1, 100_000)
    .default(50)
    .describe('datagrams per second one source address (all its ports together) may have read; the rest are dropped unread, before any HMAC'),
});
export type PeerMeshConfig = z.output<typeof PeerMeshConfigSchema>;

/** Heartbeat, suspect and down times with the defaults filled in and in order (suspect ≤ down). */
export interface MeshTimings {
  heartbeatMs: number;
  suspectMs: number;
  downMs: number;
  dropMs: number;
  windowMs: number;
}

export function meshTimings(config: PeerMeshConfig): MeshTimings {
  const heartbeatMs = config.MESH_HEARTBEAT_MS;
  const suspectMs = config.MESH_SUSPECT_MS ?? 3 * heartbeatMs;
  const downMs = Math.max(config.MESH_DOWN_MS ?? 5 * heartbeatMs, suspectMs);
  const dropMs = Math.max(config.MESH_DROP_MS ?? 30 * heartbeatMs, downMs);
  return { heartbeatMs, suspectMs, downMs, dropMs, windowMs: config.MESH_WINDOW_MS };
}
