/**
 * Valid examples of every wire contract, built from the spec's own field tables (spec 01). Tests of
 * the contracts use them, and so can publishers', the hub's and the verifier's tests. Each call
 * returns a fresh object, so a test may mutate it to make an invalid one.
 */
export const TS = '2026-11-22T01:58:16.447Z';

export const examples = {
  detection: () => ({ c: 0, p: 0.91, b: [120, 80, 220, 400] }),
  trackedDetection: () => ({ c: 0, p: 0.88, b: [10, 20, 110, 320], track_id: 7, x: 0.4, y: -0.1, z: 5.2 }),
  dets: () => ({
    timestamp: TS,
    camera_id: 'shadow1',
    dets: [
      { c: 0, p: 0.91, b: [120, 80, 220, 400] },
      { c: 10, p: 0.52, b: [300, 300, 340, 330], track_id: 3 },
    ],
    person_count: 1,
    rf_detr_precomputed: true,
  }),
  telemetry: () => ({
    timestamp: TS,
    camera_id: 'shadow1',
    detections: [{ c: 0, p: 0.91, b: [120, 80, 220, 400] }],
    telemetry: { die_temp: 61.5, fps: 10 },
  }),
  wifi: () => ({ timestamp: TS, rssi_dbm: -61, ssid: 'fleet-ap', failover_state: 'primary' }),
  can: () => ({ timestamp: TS, frames: [{ pgn: 61444, source_address: 0, name: 'EEC1', value: { rpm: 1200 } }] }),
  health: () => ({
    timestamp: TS,
    status: 'ok',
    storage_health: 'OK',
    cert_fingerprint_present: true,
    serial: 'SN-0001',
    role: 'shadow1',
    storage: { free_gb: 41.2, used_pct: 35.5, total_gb: 64, path: '/data/recordings' },
  }),
  status: () => ({ state: 'online', thermal_state: 'NORMAL', die_temp_c: 58.25, timestamp: TS }),
  hello: () => ({
    timestamp: TS,
    device_id: 'dev-a',
    labels: ['shadow1', 'canary'],
    roles: ['camera'],
    ips: ['127.0.0.1'],
    ports: { tools: 8765, onvif: 8080, ws_discovery: 3702, rtsp: 8554, mesh: 11555, sidecar: 8777 },
    image: 'camera',
    layer: 'layer2',
    versions: { runtime: '0.1.0', plugins: { detector: '1.0.0', tracker: '1.0.0' } },
  }),
  manifestChunk: () => ({
    name: 'chunk_20261122T015800Z.h265',
    path: '/data/recordings/chunk_20261122T015800Z.h265',
    started_at: '2026-11-22T01:58:00Z',
    duration_s: 60.02,
    keyframe_count: 30,
    justified: true,
    rfdetr_stride_fps: 10,
  }),
  dataManifest: () => ({ timestamp: TS, chunks: [examples.manifestChunk()], total_chunks: 12, reason: 'boot' }),
  response: () => ({ timestamp: TS, kind: 'upload', request_id: 'r-1', ok: true }),
  event: () => ({ timestamp: TS, type: 'incident', message: 'person in restricted zone' }),
  recordingStatus: () => ({
    total_chunks: 12,
    inventory_count: 12,
    storage_health: 'WARNING',
    storage_free_gb: 3.5,
    storage_used_pct: 91.2,
    latest_chunk: { name: 'chunk_20261122T015800Z.h265', started_at: '2026-11-22T01:58:00Z' },
    is_writing_data: true,
    recommendation: 'prune old chunks (KEEP_CHUNKS=30)',
  }),
  latestDets: () => ({
    dets: [{ c: 0, p: 0.9, b: [1, 2, 3, 4], track_id: 5 }],
    person_count: 1,
    track_id: 5,
    track_ids: [5],
    temp_c: 60.1,
    timestamp: TS,
  }),
  enrichment: () => ({
    cert_fingerprint: 'sha256:ab:cd:ef',
    peer_mesh: { peers: 1, state: 'up' },
    cert_fingerprint_present: true,
    peer_comm_status: 'ok',
    listen_ports: { tools: 8765, rtsp: 8554 },
    overlay_mount: '/app-storage',
    _vms_enriched: true,
  }),
  registry: () => ({
    registry: { bus_id: 'fleet-bus-1', devices: [{ device_id: 'dev-a' }, { device_id: 'dev-b' }] },
    vms_lan_ip: '127.0.0.1',
    shadows: [{ device_id: 'dev-a', ips: ['127.0.0.1'], labels: ['shadow1', 'canary'], roles: ['camera'], bus_id: 'fleet-bus-1' }],
    path: '/etc/lookout/registry.json',
  }),
  cacheEntry: () => ({
    status: examples.status(),
    payload: examples.telemetry(),
    dets: [{ c: 0, p: 0.91, b: [120, 80, 220, 400], track_id: 2 }],
    recent_chunks: [{ name: 'chunk_20261122T015800Z.h265' }],
    anomaly_alerts: [],
    stale_sec: 120,
    age_s: 0.4,
    stale: false,
  }),
  toolCallRequest: () => ({ tool: 'get_recording_status', arguments: {} }),
  toolCallResponse: () => ({ tool: 'get_recording_status', target: 'dev-a', status: 'ok', result: examples.recordingStatus() }),
  playbackReady: () => ({
    recent_chunks: [{ name: 'chunk_20261122T015800Z.h265', justified: true, playUrl: '/media/dev-a/chunk.mp4', duration_s: 60 }],
    count: 1,
  }),
  errorBody: () => ({ error: { code: 'live_jpeg_unavailable_mcp_and_ssh_failed', message: 'no snapshot' } }),
};

/** Drops one key of an object (a required-field test). */
export function without(value: object, key: string): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  delete copy[key];
  return copy;
}
