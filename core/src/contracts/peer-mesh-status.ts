import { z } from 'zod';
import { DeviceIdSchema, NonNegativeIntSchema, PortSchema, TimestampSchema } from './common.js';

/** A peer's state in the mesh: up (heard within the suspect time), suspect (missed heartbeats), down (silent past the down time). */
export const PEER_STATES = ['up', 'suspect', 'down'] as const;
/** Validates a peer's state (see PEER_STATES). */
export const PeerStateSchema = z.enum(PEER_STATES);
/** A peer's state (see PEER_STATES). */
export type PeerState = z.infer<typeof PeerStateSchema>;

/**
 * The device's own view of its mesh: `ok` (running with a key, every known peer up or none known
 * yet), `degraded` (some peers suspect or down, or the sidecar not serving), `isolated` (peers
 * known, none up), `no_key` (no mesh key: nothing sent, nothing accepted), `down` (the socket is closed).
 */
export const PEER_COMM_STATUS_VALUES = ['ok', 'degraded', 'isolated', 'no_key', 'down'] as const;
/** Validates `peer_comm_status` (see PEER_COMM_STATUS_VALUES). */
export const PeerCommStatusSchema = z.enum(PEER_COMM_STATUS_VALUES);
/** A `peer_comm_status` value (see PEER_COMM_STATUS_VALUES). */
export type PeerCommStatus = z.infer<typeof PeerCommStatusSchema>;

/** One peer the mesh (UDP 11555, spec 01 "Peer mesh") has heard of: where it was found, its state, when it was last heard and the heartbeat's round trip. */
export const PeerEntrySchema = z.looseObject({
  device_id: DeviceIdSchema,
  address: z.string().min(1).describe('the address its datagrams come from'),
  mesh_port: PortSchema,
  sidecar_port: PortSchema.nullable().describe('its mTLS sidecar, from its hello; null when it announced none'),
  source: z.enum(['hello', 'config']).describe('how the peer was found: its hello on the bus, or MESH_PEERS'),
  state: PeerStateSchema,
  last_seen_at: TimestampSchema.nullable().describe('last valid datagram from it; null before the first'),
  rtt_ms: z.number().nonnegative().nullable().describe('round-trip time of the last answered heartbeat'),
});
/** A mesh peer as parsed (see PeerEntrySchema). */
export type PeerEntry = z.infer<typeof PeerEntrySchema>;

/** Datagrams dropped, by reason, and those accepted: what a hostile or broken sender shows up as. */
export const MeshCountersSchema = z.looseObject({
  sent: NonNegativeIntSchema,
  accepted: NonNegativeIntSchema,
  dropped_bad_signature: NonNegativeIntSchema.describe('wrong mesh key or altered datagram'),
  dropped_stale: NonNegativeIntSchema.describe('timestamp outside the window'),
  dropped_replayed: NonNegativeIntSchema.describe('sequence number not above the last accepted from that peer'),
  dropped_malformed: NonNegativeIntSchema.describe('not a mesh datagram (size, framing, JSON, fields)'),
  dropped_unknown_sender: NonNegativeIntSchema.describe('signed correctly but claiming to be this device'),
});
/** The mesh's datagram counters as parsed (see MeshCountersSchema). */
export type MeshCounters = z.infer<typeof MeshCountersSchema>;

/** The peer mTLS sidecar's state (port 8777, spec 01 "Peer mesh"): whether it listens, why not, the pinned CA and its counters. */
export const SidecarStatusSchema = z.looseObject({
  listening: z.boolean(),
  port: PortSchema.nullable(),
  /** Why it does not listen (no certificate, no fleet CA, port taken); null when it does. */
  problem: z.string().nullable(),
  ca_fingerprint: z.string().nullable().describe('SHA-256 of the pinned fleet CA certificate, colon hex'),
  queries_answered: NonNegativeIntSchema,
  handshakes_refused: NonNegativeIntSchema.describe('clients without a certificate of the fleet CA'),
});

/** `get_peer_mesh_status` result: what the hub's health enrichment and the readiness check read. */
export const PeerMeshStatusSchema = z
  .looseObject({
    device_id: DeviceIdSchema,
    peer_comm_status: PeerCommStatusSchema,
    reason: z.string().nullable().describe('why peer_comm_status is not ok'),
    mesh_key_present: z.boolean().describe('whether a mesh key is configured (the key itself is never shown)'),
    listen_ports: z.looseObject({ mesh: PortSchema.nullable(), sidecar: PortSchema.nullable() }),
    overlay_mount: z
      .string()
      .min(1)
      .nullable()
      .describe('mount point of the writable filesystem holding the device data; null when it is read-only or unknown'),
    peers: z.array(PeerEntrySchema),
    peer_count: NonNegativeIntSchema,
    peers_up: NonNegativeIntSchema,
    sidecar: SidecarStatusSchema,
    counters: MeshCountersSchema,
    timestamp: TimestampSchema,
  })
  .describe('get_peer_mesh_status result');
/** A `get_peer_mesh_status` result as parsed (see PeerMeshStatusSchema). */
export type PeerMeshStatus = z.infer<typeof PeerMeshStatusSchema>;

/** What a device's sidecar answers to `peer_hello` (POST /peer/query?q=peer_hello over mTLS). */
export const PeerHelloAckSchema = z
  .looseObject({
    q: z.literal('peer_hello'),
    ack: z.literal(true),
    device_id: DeviceIdSchema,
    cert_fingerprint: z.string().nullable(),
    peer_comm_status: PeerCommStatusSchema,
    peers_up: NonNegativeIntSchema,
    /** The caller as its client certificate names it (subject CN). */
    caller: z.string().min(1),
    received_at: TimestampSchema,
  })
  .describe('peer_hello acknowledgement');
/** A `peer_hello` acknowledgement as parsed (see PeerHelloAckSchema). */
export type PeerHelloAck = z.infer<typeof PeerHelloAckSchema>;
