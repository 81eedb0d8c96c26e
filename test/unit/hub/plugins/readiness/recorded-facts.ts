/**
 * Recorded inputs of a readiness check, built through the real wire contracts (health message,
 * enrichment, get_peer_mesh_status, get_recording_status, get_live_status, peer_hello), so that
 * a fixture outside a contract fails here rather than grading something no device sends. Not a
 * test file itself.
 */
import {
  HealthEnrichmentSchema,
  HealthMessageSchema,
  PeerHelloAckSchema,
  PeerMeshStatusSchema,
  PluginReportSchema,
  RecordingStatusResultSchema,
  type PeerMeshStatus,
} from '../../../../../core/src/contracts/index.js';
import { type PluginReport } from '../../../../../core/src/index.js';
import { LiveStatusResultSchema } from '../../../../../plugins/rtsp/src/service.js';
import type { DeviceFacts } from '../../../../../hub/plugins/readiness/src/device-facts.js';

export const NOW = Date.parse('2025-06-01T12:00:00Z');
export const ISO_NOW = new Date(NOW).toISOString();
export const DEVICE = 'cam-1';
export const FINGERPRINT = Array.from({ length: 32 }, (_, i) => (i * 7 + 16).toString(16).toUpperCase().padStart(2, '0')).join(':');

export const CAMERA_PLUGINS = [
  'die-temp',
  'identity',
  'system-health',
  'status',
  'firmware',
  'camera-profile',
  'camera',
  'encode',
  'recorder',
  'rtsp',
  'onvif',
  'ws-discovery',
  'detector',
  'tracker',
  'depth',
  'peer-mesh',
];

export function plugins(names: string[], states: Record<string, Partial<PluginReport>> = {}): PluginReport[] {
  return names.map((name) => PluginReportSchema.parse({ name, version: '1.0.0', state: 'ok', ...states[name] }));
}

export function meshStatus(overrides: Partial<PeerMeshStatus> = {}): PeerMeshStatus {
  return PeerMeshStatusSchema.parse({
    device_id: DEVICE,
    peer_comm_status: 'ok',
    reason: null,
    mesh_key_present: true,
    listen_ports: { mesh: 11555, sidecar: 8777 },
    overlay_mount: '/data',
    peers: [
      {
        device_id: 'cam-2',
        address: '127.0.0.3',
        mesh_port: 11556,
        sidecar_port: 8778,
        source: 'hello',
        state: 'up',
        last_seen_at: ISO_NOW,
        rtt_ms: 1.5,
      },
    ],
    peer_count: 1,
    peers_up: 1,
    sidecar: { listening: true, port: 8777, problem: null, ca_fingerprint: FINGERPRINT, queries_answered: 3, handshakes_refused: 0 },
    counters: {
      sent: 10,
      accepted: 9,
      dropped_bad_signature: 0,
      dropped_stale: 0,
      dropped_replayed: 0,
      dropped_malformed: 0,
      dropped_unknown_sender: 0,
    },
    timestamp: ISO_NOW,
    ...overrides,
  });
}

export interface HealthOptions {
  status?: 'ok' | 'degraded' | 'critical';
  storage?: 'OK' | 'WARNING' | 'CRITICAL';
  plugins?: PluginReport[];
  /** The peer_mesh the enrichment carries; null as when get_peer_mesh_status failed. */
  mesh?: Record<string, unknown> | null;
  meshMissingReason?: string;
  fingerprint?: string | null;
  present?: boolean;
  overlay?: string | null;
}

/** An enriched get_system_health answer: the device's health message plus the hub's enrichment fields. */
export function healthAnswer(o: HealthOptions = {}): Record<string, unknown> {
  const device = HealthMessageSchema.parse({
    timestamp: ISO_NOW,
    device_id: DEVICE,
    status: o.status ?? 'ok',
    storage_health: o.storage ?? 'OK',
    cert_fingerprint_present: o.present ?? true,
    serial: 'SER-1',
    role: 'front_door',
    storage: { free_gb: 10, used_pct: 20 },
    plugins: o.plugins ?? plugins(CAMERA_PLUGINS),
  });
  const mesh = o.mesh === undefined ? meshStatus() : o.mesh;
  const fingerprint = o.fingerprint === undefined ? FINGERPRINT : o.fingerprint;
  const overlay = o.overlay === undefined ? (typeof mesh?.overlay_mount === 'string' ? mesh.overlay_mount : null) : o.overlay;
  const missing: string[] = [];
  if (fingerprint === null) missing.push('cert_fingerprint: the device reports no certificate');
  if (mesh === null) {
    missing.push(`peer_mesh: ${o.meshMissingReason ?? `get_peer_mesh_status failed: ${DEVICE} has no tool named "get_peer_mesh_status"`}`);
    missing.push(`peer_comm_status: ${o.meshMissingReason ?? `get_peer_mesh_status failed: ${DEVICE} has no tool named "get_peer_mesh_status"`}`);
  }
  if (overlay === null) missing.push('overlay_mount: not reported by the device');
  const enrichment = HealthEnrichmentSchema.parse({
    cert_fingerprint: fingerprint,
    peer_mesh: mesh,
    cert_fingerprint_present: o.present ?? fingerprint !== null,
    peer_comm_status: typeof mesh?.peer_comm_status === 'string' ? mesh.peer_comm_status : null,
    listen_ports: { tools: 8765, rtsp: 8554, onvif: 8080, live: 8766, mesh: 11555, sidecar: 8777 },
    overlay_mount: overlay,
    _vms_enriched: true,
    ...(missing.length ? { _vms_enrichment_missing: missing } : {}),
  });
  return { ...device, ...enrichment };
}

export function recording(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return RecordingStatusResultSchema.parse({
    total_chunks: 4,
    inventory_count: 4,
    storage_health: 'OK',
    storage_free_gb: 10,
    storage_used_pct: 20,
    latest_chunk: { name: 'seg_0004.h265', path: '/data/recordings/seg_0004.h265', started_at: ISO_NOW, size_bytes: 1000 },
    is_writing_data: true,
    recommendation: '',
    ...overrides,
  });
}

export function liveStatus(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return LiveStatusResultSchema.parse({
    stream_up: true,
    codec: 'H265',
    h264_available: true,
    width: 320,
    height: 240,
    fps: 5,
    gop: 5,
    viewers: 0,
    sessions: { tcp: 0, udp: 0 },
    last_keyframe_at: ISO_NOW,
    rtsp: { port: 8554, paths: { h265: '/preview', h264: '/preview_h264' } },
    encoder: { running: true, frames: 100, dropped: 0, encode_fps: 5, bitrate_kbps: 300 },
    ...overrides,
  });
}

export function peerAck(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const ack = PeerHelloAckSchema.parse({
    q: 'peer_hello',
    ack: true,
    device_id: DEVICE,
    cert_fingerprint: FINGERPRINT,
    peer_comm_status: 'ok',
    peers_up: 1,
    caller: 'lookout-hub',
    received_at: ISO_NOW,
    ...overrides,
  });
  // As A2A_PEERS gives it: the hub's own fields, and the certificate the sidecar presented over TLS.
  return { ...ack, rtt_ms: 2, sidecar: '127.0.0.2:8777', tls_fingerprint: FINGERPRINT };
}

/** A healthy camera of the full image at layer 3 (depth on), every probe answered; `overrides` change any part. */
export function recordedFacts(overrides: Partial<DeviceFacts> = {}): DeviceFacts {
  const answer = healthAnswer();
  return {
    deviceId: DEVICE,
    at: NOW,
    registered: {
      toolUrl: 'http://127.0.0.2:8765/mcp',
      unreachableReason: null,
      host: '127.0.0.2',
      ports: { tools: 8765, rtsp: 8554, onvif: 8080, live: 8766, mesh: 11555, sidecar: 8777 },
      layer: 'layer3',
      image: 'camera',
    },
    presence: 'online',
    health: { ok: true, value: answer },
    plugins: { list: answer.plugins as PluginReport[], source: 'get_system_health' },
    layer: 'layer3',
    peerHello: { ok: true, value: peerAck() },
    recording: { ok: true, value: recording() },
    liveStatus: { ok: true, value: liveStatus() },
    onvifConnect: { ok: true, value: { address: '127.0.0.2:8080' } },
    manifest: { chunks: 4, newest: { name: 'seg_0004.h265', started_at: ISO_NOW } },
    dets: { at: ISO_NOW, detections: 2, spatial: 2 },
    hubRoutes: { playback: true, snapshot: true },
    ...overrides,
  };
}

/** The facts of a health answer: the answer and the plugin list it carries. */
export function withHealth(o: HealthOptions, rest: Partial<DeviceFacts> = {}): DeviceFacts {
  const answer = healthAnswer(o);
  return recordedFacts({ health: { ok: true, value: answer }, plugins: { list: answer.plugins as PluginReport[], source: 'get_system_health' }, ...rest });
}
