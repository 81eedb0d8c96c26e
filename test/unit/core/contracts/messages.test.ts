import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CanTelemetryMessageSchema,
  DataManifestMessageSchema,
  DetectionSchema,
  DetsMessageSchema,
  EventMessageSchema,
  HealthMessageSchema,
  HelloMessageSchema,
  ResponseMessageSchema,
  StatusMessageSchema,
  TelemetryMessageSchema,
  TimestampSchema,
  WifiTelemetryMessageSchema,
} from '../../../../core/src/contracts/index.js';
import { assertAccepts, assertRejects } from '../../../support/contract-assert.js';
import { examples, without } from '../../../support/contract-examples.js';

describe('Timestamp', () => {
  it('accepts ISO 8601 UTC, with Z or a zero offset', () => {
    for (const v of ['2026-11-22T01:58:16.447Z', '2026-11-22T01:58:16Z', '2026-11-22T01:58:16.123456+00:00', new Date().toISOString()]) {
      assertAccepts(TimestampSchema, v);
    }
  });
  it('refuses other offsets, missing zones, other formats and numbers', () => {
    for (const v of [
      '2026-11-22T01:58:16+02:00',
      '2026-11-22T01:58:16',
      '2026-11-22',
      '2026-11-22 01:58:16Z',
      'yesterday',
      '1763776696',
      1763776696,
      '2026-13-01T00:00:00Z',
    ]) {
      assertRejects(TimestampSchema, v, '');
    }
  });
});

describe('Detection', () => {
  it('accepts the spec keys c, p, b (and optional track_id, x, y, z)', () => {
    assertAccepts(DetectionSchema, examples.detection());
    assertAccepts(DetectionSchema, examples.trackedDetection());
  });
  it('accepts more than 4 numbers in b and keeps unknown keys', () => {
    const parsed = DetectionSchema.parse({ ...examples.detection(), b: [1, 2, 3, 4, 0.5, 0.7], label: 'person' });
    assert.deepEqual(parsed.b, [1, 2, 3, 4, 0.5, 0.7]);
    assert.equal((parsed as Record<string, unknown>).label, 'person');
  });
  it('refuses a missing c, p or b', () => {
    for (const key of ['c', 'p', 'b']) assertRejects(DetectionSchema, without(examples.detection(), key), key);
  });
  it('refuses a box of 3 numbers, a box of strings, a non-integer or negative class, a confidence outside [0, 1]', () => {
    assertRejects(DetectionSchema, { ...examples.detection(), b: [1, 2, 3] }, 'b');
    assertRejects(DetectionSchema, { ...examples.detection(), b: ['1', '2', '3', '4'] }, 'b.0');
    assertRejects(DetectionSchema, { ...examples.detection(), c: 1.5 }, 'c');
    assertRejects(DetectionSchema, { ...examples.detection(), c: -1 }, 'c');
    assertRejects(DetectionSchema, { ...examples.detection(), p: 1.2 }, 'p');
    assertRejects(DetectionSchema, { ...examples.detection(), p: '0.9' }, 'p');
    assertRejects(DetectionSchema, { ...examples.detection(), track_id: 2.5 }, 'track_id');
    assertRejects(DetectionSchema, { ...examples.trackedDetection(), z: 'far' }, 'z');
  });
});

describe('dets message', () => {
  it('accepts the spec fields', () => assertAccepts(DetsMessageSchema, examples.dets()));
  it('refuses each missing field', () => {
    for (const key of ['timestamp', 'camera_id', 'dets', 'person_count', 'rf_detr_precomputed']) {
      assertRejects(DetsMessageSchema, without(examples.dets(), key), key);
    }
  });
  it('refuses a negative or fractional person_count, a string flag, a bad detection, a local timestamp', () => {
    assertRejects(DetsMessageSchema, { ...examples.dets(), person_count: -1 }, 'person_count');
    assertRejects(DetsMessageSchema, { ...examples.dets(), person_count: 1.5 }, 'person_count');
    assertRejects(DetsMessageSchema, { ...examples.dets(), rf_detr_precomputed: 'true' }, 'rf_detr_precomputed');
    assertRejects(DetsMessageSchema, { ...examples.dets(), dets: [{ c: 0, p: 0.9, b: [1, 2, 3] }] }, 'dets.0.b');
    assertRejects(DetsMessageSchema, { ...examples.dets(), timestamp: '2026-11-22T01:58:16' }, 'timestamp');
    assertRejects(DetsMessageSchema, { ...examples.dets(), camera_id: '' }, 'camera_id');
  });
  it('keeps fields a newer publisher adds', () => {
    const parsed = DetsMessageSchema.parse({ ...examples.dets(), frame_id: 99 });
    assert.equal((parsed as Record<string, unknown>).frame_id, 99);
  });
});

describe('telemetry message', () => {
  it('accepts the spec fields', () => assertAccepts(TelemetryMessageSchema, examples.telemetry()));
  it('refuses each field the contract verifier requires', () => {
    for (const key of ['timestamp', 'camera_id', 'detections', 'telemetry']) {
      assertRejects(TelemetryMessageSchema, without(examples.telemetry(), key), key);
    }
    assertRejects(TelemetryMessageSchema, { ...examples.telemetry(), telemetry: { fps: 10 } }, 'telemetry.die_temp');
    assertRejects(TelemetryMessageSchema, { ...examples.telemetry(), telemetry: { die_temp: 60 } }, 'telemetry.fps');
  });
  it('refuses a fractional fps and a textual die_temp', () => {
    assertRejects(TelemetryMessageSchema, { ...examples.telemetry(), telemetry: { die_temp: 60, fps: 9.7 } }, 'telemetry.fps');
    assertRejects(TelemetryMessageSchema, { ...examples.telemetry(), telemetry: { die_temp: '60', fps: 10 } }, 'telemetry.die_temp');
  });
});

describe('status message', () => {
  it('accepts online and the offline last-will', () => {
    assertAccepts(StatusMessageSchema, examples.status());
    assertAccepts(StatusMessageSchema, { ...examples.status(), state: 'offline', thermal_state: 'THERMAL_CRITICAL' });
    // The last-will says when it was set, not a timestamp it was never sent at, and no current temperature.
    const { timestamp, ...will } = { ...examples.status(), state: 'offline', thermal_state: null, die_temp_c: null, will_set_at: examples.status().timestamp };
    assert.ok(timestamp);
    assertAccepts(StatusMessageSchema, will);
  });
  it('refuses a bad state or thermal_state, a textual die_temp_c, a missing field', () => {
    assertRejects(StatusMessageSchema, { ...examples.status(), state: 'sleeping' }, 'state');
    assertRejects(StatusMessageSchema, { ...examples.status(), thermal_state: 'HOT' }, 'thermal_state');
    assertRejects(StatusMessageSchema, { ...examples.status(), thermal_state: 'normal' }, 'thermal_state');
    assertRejects(StatusMessageSchema, { ...examples.status(), die_temp_c: '58' }, 'die_temp_c');
    for (const key of ['state', 'thermal_state', 'die_temp_c', 'timestamp']) {
      assertRejects(StatusMessageSchema, without(examples.status(), key), key);
    }
  });
});

describe('health message', () => {
  it('accepts every storage_health value', () => {
    for (const v of ['OK', 'WARNING', 'CRITICAL']) assertAccepts(HealthMessageSchema, { ...examples.health(), storage_health: v });
  });
  it('refuses a bad storage_health, a textual flag, a missing summary, a bad percentage', () => {
    assertRejects(HealthMessageSchema, { ...examples.health(), storage_health: 'FULL' }, 'storage_health');
    assertRejects(HealthMessageSchema, { ...examples.health(), cert_fingerprint_present: 'yes' }, 'cert_fingerprint_present');
    for (const key of ['status', 'storage_health', 'cert_fingerprint_present', 'serial', 'role', 'storage', 'timestamp']) {
      assertRejects(HealthMessageSchema, without(examples.health(), key), key);
    }
    assertRejects(HealthMessageSchema, { ...examples.health(), storage: { free_gb: 1, used_pct: 140 } }, 'storage.used_pct');
    assertRejects(HealthMessageSchema, { ...examples.health(), storage: { free_gb: -1, used_pct: 10 } }, 'storage.free_gb');
  });
});

describe('hello message', () => {
  it('accepts id, labels, roles, addresses, ports, image, layer, versions', () => {
    assertAccepts(HelloMessageSchema, examples.hello());
    assertAccepts(HelloMessageSchema, { ...examples.hello(), ips: ['::1'], ports: { tools: 40123 } });
  });
  it('refuses a missing tool port, a port out of range, a bad address, an unknown layer, a topic-breaking id', () => {
    assertRejects(HelloMessageSchema, { ...examples.hello(), ports: { rtsp: 8554 } }, 'ports.tools');
    assertRejects(HelloMessageSchema, { ...examples.hello(), ports: { tools: 70000 } }, 'ports.tools');
    assertRejects(HelloMessageSchema, { ...examples.hello(), ports: { tools: 8765, rtsp: 0 } }, 'ports.rtsp');
    assertRejects(HelloMessageSchema, { ...examples.hello(), ips: ['999.1.1.1'] }, 'ips.0');
    assertRejects(HelloMessageSchema, { ...examples.hello(), ips: [] }, 'ips');
    assertRejects(HelloMessageSchema, { ...examples.hello(), layer: 'layer9' }, 'layer');
    assertRejects(HelloMessageSchema, { ...examples.hello(), device_id: 'a/b' }, 'device_id');
    assertRejects(HelloMessageSchema, { ...examples.hello(), device_id: 'dev+' }, 'device_id');
    assertRejects(HelloMessageSchema, { ...examples.hello(), labels: [] }, 'labels');
    assertRejects(HelloMessageSchema, without(examples.hello(), 'versions'), 'versions');
  });
});

describe('data_manifest message', () => {
  it('accepts a chunk index with the sidecar fields', () => assertAccepts(DataManifestMessageSchema, examples.dataManifest()));
  it('refuses a chunk missing a sidecar field or with wrong types', () => {
    for (const key of ['duration_s', 'keyframe_count', 'justified', 'rfdetr_stride_fps', 'name', 'started_at']) {
      assertRejects(DataManifestMessageSchema, { ...examples.dataManifest(), chunks: [without(examples.manifestChunk(), key)] }, `chunks.0.${key}`);
    }
    const chunk = { ...examples.manifestChunk(), keyframe_count: -3, justified: 'yes', duration_s: 0 };
    const base = { ...examples.dataManifest(), chunks: [chunk] };
    assertRejects(DataManifestMessageSchema, base, 'chunks.0.keyframe_count');
    assertRejects(DataManifestMessageSchema, base, 'chunks.0.justified');
    assertRejects(DataManifestMessageSchema, base, 'chunks.0.duration_s');
  });
});

describe('loose bus messages: telemetry/wifi, telemetry/can, responses, events', () => {
  const cases = [
    ['telemetry/wifi', WifiTelemetryMessageSchema, examples.wifi()],
    ['telemetry/can', CanTelemetryMessageSchema, examples.can()],
    ['responses', ResponseMessageSchema, examples.response()],
    ['events', EventMessageSchema, examples.event()],
  ] as const;
  for (const [name, schema, example] of cases) {
    it(`${name}: a timestamp alone is enough, extra fields pass through`, () => {
      assertAccepts(schema, example);
      const parsed = schema.parse({ timestamp: example.timestamp, vendor_field: [1, 2] }) as Record<string, unknown>;
      assert.deepEqual(parsed.vendor_field, [1, 2]);
    });
    it(`${name}: refuses a missing or non-UTC timestamp and a non-object`, () => {
      assertRejects(schema, without(example, 'timestamp'), 'timestamp');
      assertRejects(schema, { ...example, timestamp: '2026-11-22T01:58:16+05:30' }, 'timestamp');
      assertRejects(schema, [example], '');
      assertRejects(schema, 'hello', '');
    });
  }
  it('types the named fields when present', () => {
    assertRejects(WifiTelemetryMessageSchema, { ...examples.wifi(), rssi_dbm: 'strong' }, 'rssi_dbm');
    assertRejects(CanTelemetryMessageSchema, { ...examples.can(), frames: [{ pgn: -1 }] }, 'frames.0.pgn');
    assertRejects(ResponseMessageSchema, { ...examples.response(), ok: 'yes' }, 'ok');
    assertRejects(EventMessageSchema, { ...examples.event(), type: '' }, 'type');
  });
});
