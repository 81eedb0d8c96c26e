import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CacheEntrySchema,
  EnrichedHealthResponseSchema,
  ErrorBodySchema,
  FleetLatestResponseSchema,
  HealthEnrichmentSchema,
  LatestDetsResultSchema,
  PlaybackReadyResultSchema,
  READINESS_ENRICHMENT_FIELDS,
  RecordingStatusResultSchema,
  RegistryRecordSchema,
  ToolCallRequestSchema,
  ToolCallResponseSchema,
} from '../../../../core/src/contracts/index.js';
import { LookoutError } from '../../../../core/src/errors/lookout-error.js';
import { assertAccepts, assertRejects } from '../../../support/contract-assert.js';
import { examples, without } from '../../../support/contract-examples.js';

describe('get_recording_status result', () => {
  it('accepts the spec table, and a null latest_chunk before the first chunk', () => {
    assertAccepts(RecordingStatusResultSchema, examples.recordingStatus());
    assertAccepts(RecordingStatusResultSchema, { ...examples.recordingStatus(), latest_chunk: null, total_chunks: 0, recommendation: '' });
  });
  it('refuses each missing field', () => {
    for (const key of [
      'total_chunks',
      'inventory_count',
      'storage_health',
      'storage_free_gb',
      'storage_used_pct',
      'latest_chunk',
      'is_writing_data',
      'recommendation',
    ]) {
      assertRejects(RecordingStatusResultSchema, without(examples.recordingStatus(), key), key);
    }
  });
  it('refuses wrong types and values', () => {
    assertRejects(RecordingStatusResultSchema, { ...examples.recordingStatus(), storage_health: 'BAD' }, 'storage_health');
    assertRejects(RecordingStatusResultSchema, { ...examples.recordingStatus(), total_chunks: 2.5 }, 'total_chunks');
    assertRejects(RecordingStatusResultSchema, { ...examples.recordingStatus(), inventory_count: -1 }, 'inventory_count');
    assertRejects(RecordingStatusResultSchema, { ...examples.recordingStatus(), storage_used_pct: 101 }, 'storage_used_pct');
    assertRejects(RecordingStatusResultSchema, { ...examples.recordingStatus(), is_writing_data: 1 }, 'is_writing_data');
    assertRejects(RecordingStatusResultSchema, { ...examples.recordingStatus(), latest_chunk: { path: '/x' } }, 'latest_chunk.name');
  });
});

describe('get_latest_dets result', () => {
  it('accepts dets with track_id, person_count, one track_id (or null) and the track_ids list, temp_c', () => {
    assertAccepts(LatestDetsResultSchema, examples.latestDets());
    assertAccepts(LatestDetsResultSchema, { dets: [], person_count: 0, track_id: null, track_ids: [], temp_c: 40, timestamp: null });
  });
  it('refuses a missing field, a negative count, a non-integer track id, a textual temperature', () => {
    for (const key of ['dets', 'person_count', 'track_id', 'track_ids', 'temp_c']) {
      assertRejects(LatestDetsResultSchema, without(examples.latestDets(), key), key);
    }
    assertRejects(LatestDetsResultSchema, { ...examples.latestDets(), person_count: -2 }, 'person_count');
    assertRejects(LatestDetsResultSchema, { ...examples.latestDets(), track_id: 1.5 }, 'track_id');
    assertRejects(LatestDetsResultSchema, { ...examples.latestDets(), track_id: [5] }, 'track_id');
    assertRejects(LatestDetsResultSchema, { ...examples.latestDets(), track_ids: [1.5] }, 'track_ids.0');
    assertRejects(LatestDetsResultSchema, { ...examples.latestDets(), temp_c: 'hot' }, 'temp_c');
  });
});

describe('health enrichment', () => {
  it('accepts the fields the readiness check asserts, and nulls for what could not be obtained', () => {
    assertAccepts(HealthEnrichmentSchema, examples.enrichment());
    const partial = {
      ...examples.enrichment(),
      cert_fingerprint: null,
      cert_fingerprint_present: false,
      peer_mesh: null,
      peer_comm_status: null,
      listen_ports: null,
      overlay_mount: null,
      _vms_enrichment_missing: ['peer_mesh: get_peer_mesh_status is not served by this device'],
    };
    assertAccepts(HealthEnrichmentSchema, partial);
    for (const key of READINESS_ENRICHMENT_FIELDS) assert.ok(key in HealthEnrichmentSchema.shape, key);
  });
  it('refuses a missing readiness field and wrong types', () => {
    for (const key of [...READINESS_ENRICHMENT_FIELDS, '_vms_enriched', 'cert_fingerprint']) {
      assertRejects(HealthEnrichmentSchema, without(examples.enrichment(), key), key);
    }
    assertRejects(HealthEnrichmentSchema, { ...examples.enrichment(), cert_fingerprint_present: 'true' }, 'cert_fingerprint_present');
    assertRejects(HealthEnrichmentSchema, { ...examples.enrichment(), peer_mesh: 'up' }, 'peer_mesh');
  });
  it('an enriched tools/call answer carries the fields at the top and inside result', () => {
    const inner = { status: 'ok', storage_health: 'OK', ...examples.enrichment() };
    const answer = { tool: 'get_system_health', target: 'dev-a', status: 'ok', ...examples.enrichment(), result: inner };
    const parsed = EnrichedHealthResponseSchema.parse(answer);
    assert.equal(parsed._vms_enriched, true);
    assert.equal((parsed.result as Record<string, unknown>).storage_health, 'OK');
    assertRejects(EnrichedHealthResponseSchema, { ...answer, result: { status: 'ok' } }, 'result.cert_fingerprint_present');
    assertRejects(EnrichedHealthResponseSchema, without(answer, '_vms_enriched'), '_vms_enriched');
  });
});

describe('registry record', () => {
  it('accepts registry{bus_id, devices}, vms_lan_ip, shadows and path', () => assertAccepts(RegistryRecordSchema, examples.registry()));
  it('refuses missing parts and bad shadows', () => {
    for (const key of ['registry', 'vms_lan_ip', 'shadows', 'path']) assertRejects(RegistryRecordSchema, without(examples.registry(), key), key);
    const r = examples.registry();
    assertRejects(RegistryRecordSchema, { ...r, registry: { devices: [] } }, 'registry.bus_id');
    assertRejects(RegistryRecordSchema, { ...r, vms_lan_ip: 'localhost' }, 'vms_lan_ip');
    for (const key of ['device_id', 'ips', 'labels', 'roles', 'bus_id']) {
      assertRejects(RegistryRecordSchema, { ...r, shadows: [without(r.shadows[0], key)] }, `shadows.0.${key}`);
    }
    assertRejects(RegistryRecordSchema, { ...r, shadows: [{ ...r.shadows[0], labels: 'canary' }] }, 'shadows.0.labels');
  });
});

describe('per-device cache entry and GET /fleet/mqtt/latest', () => {
  it('accepts the spec fields plus age_s and stale, and nulls before the first message', () => {
    assertAccepts(CacheEntrySchema, examples.cacheEntry());
    assertAccepts(CacheEntrySchema, { ...examples.cacheEntry(), status: null, payload: null, dets: [] });
    const parsed = FleetLatestResponseSchema.parse({ devices: { 'dev-a': examples.cacheEntry() } });
    assert.equal(parsed.devices['dev-a']?.payload?.telemetry.fps, 10);
    assert.equal(parsed.devices['dev-a']?.stale_sec, 120);
  });
  it('refuses missing fields, a payload without telemetry.die_temp, a fractional stale_sec, a bad status', () => {
    for (const key of ['status', 'payload', 'dets', 'recent_chunks', 'anomaly_alerts', 'stale_sec', 'age_s', 'stale']) {
      assertRejects(CacheEntrySchema, without(examples.cacheEntry(), key), key);
    }
    const e = examples.cacheEntry();
    assertRejects(CacheEntrySchema, { ...e, payload: { ...e.payload, telemetry: { fps: 10 } } }, 'payload.telemetry.die_temp');
    assertRejects(CacheEntrySchema, { ...e, stale_sec: 1.5 }, 'stale_sec');
    assertRejects(CacheEntrySchema, { ...e, status: { ...e.status, state: 'gone' } }, 'status.state');
    assertRejects(CacheEntrySchema, { ...e, recent_chunks: ['chunk'] }, 'recent_chunks.0');
    assertRejects(FleetLatestResponseSchema, { devices: { 'dev-a': { ...e, stale: 'no' } } }, 'devices.dev-a.stale');
  });
});

describe('tools/call body and answer', () => {
  it('accepts a tool with an empty arguments object, and both answer statuses', () => {
    assertAccepts(ToolCallRequestSchema, examples.toolCallRequest());
    assertAccepts(ToolCallResponseSchema, examples.toolCallResponse());
    assertAccepts(ToolCallResponseSchema, {
      tool: 'video_understand',
      target: 'dev-a',
      status: 'error',
      result: null,
      error: { code: 'tool_failed', message: 'no clip' },
    });
  });
  it('refuses a missing tool or arguments, array arguments, an unknown status', () => {
    assertRejects(ToolCallRequestSchema, { arguments: {} }, 'tool');
    assertRejects(ToolCallRequestSchema, { tool: 'get_recording_status' }, 'arguments');
    assertRejects(ToolCallRequestSchema, { tool: 'get_recording_status', arguments: [] }, 'arguments');
    assertRejects(ToolCallResponseSchema, { ...examples.toolCallResponse(), status: 'done' }, 'status');
    assertRejects(ToolCallResponseSchema, { ...examples.toolCallResponse(), status: 'error', error: 'no clip' }, 'error');
  });
});

describe('playback-ready result and error body', () => {
  it('accepts chunks with justified metadata and playUrl', () => assertAccepts(PlaybackReadyResultSchema, examples.playbackReady()));
  it('refuses a chunk without playUrl or justified, a negative count', () => {
    const r = examples.playbackReady();
    assertRejects(PlaybackReadyResultSchema, { ...r, recent_chunks: [without(r.recent_chunks[0], 'playUrl')] }, 'recent_chunks.0.playUrl');
    assertRejects(PlaybackReadyResultSchema, { ...r, recent_chunks: [without(r.recent_chunks[0], 'justified')] }, 'recent_chunks.0.justified');
    assertRejects(PlaybackReadyResultSchema, { ...r, count: -1 }, 'count');
  });
  it('the body of a LookoutError is a valid error body; a bad code is not', () => {
    assertAccepts(ErrorBodySchema, examples.errorBody());
    assertAccepts(ErrorBodySchema, new LookoutError('target_unknown', 'no device x', { details: { target: 'x' } }).toBody());
    assertRejects(ErrorBodySchema, { error: { code: 'Not Found', message: 'x' } }, 'error.code');
    assertRejects(ErrorBodySchema, { error: { code: 'x' } }, 'error.message');
  });
});
