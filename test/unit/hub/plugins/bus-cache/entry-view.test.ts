import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CacheEntrySchema } from '../../../../../core/src/contracts/cache-entry.js';
import { entryView } from '../../../../../hub/plugins/bus-cache/src/entry-view.js';
import type { DeviceSnapshot } from '../../../../../hub/plugins/bus-cache/src/service.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** A device's cache as the ingest holds it: the latest message per topic, with when it arrived. */
function snapshot(latest: Record<string, { message: Record<string, unknown>; at: number }>): DeviceSnapshot {
  const map = new Map(Object.entries(latest).map(([suffix, l]) => [suffix, { message: l.message, receivedAt: l.at, retain: suffix === 'status', count: 1 }]));
  return {
    deviceId: 'cam-1',
    latest: map,
    invalid: new Map(),
    recentChunks: [],
    anomalyAlerts: [],
    newestAt: Math.max(...Object.values(latest).map((l) => l.at)),
  };
}

const dets = (at: number) => ({
  message: { timestamp: iso(at), camera_id: 'front', dets: [{ c: 0, p: 0.9, b: [1, 2, 3, 4] }], person_count: 3, rf_detr_precomputed: true },
  at,
});
const telemetry = (at: number, extra: Record<string, unknown>) => ({
  message: { timestamp: iso(at), camera_id: 'front', detections: [], telemetry: { die_temp: 91, fps: 0, ...extra } },
  at,
});
const status = (at: number, extra: Record<string, unknown> = {}) => ({
  message: { state: 'online', thermal_state: 'THERMAL_CRITICAL', die_temp_c: 91, timestamp: iso(at), ...extra },
  at,
});

describe('cache entry while the detector is suspended', () => {
  it('is neither a frozen count nor an empty scene: detection suspended, person_count null, since when', () => {
    const since = iso(T0 + 1000);
    const d = snapshot({
      dets: dets(T0),
      telemetry: telemetry(T0 + 5000, { detection: 'suspended', suspended_since: since, detection_reason: 'THERMAL_CRITICAL' }),
      status: status(T0 + 1000),
    });
    const view = entryView(d, 120, T0 + 5100);
    assert.equal(view.stale, false);
    assert.equal(view.detection, 'suspended');
    assert.equal(view.person_count, null);
    assert.deepEqual(view.dets, []);
    assert.equal(view.suspended_since, since);
    assert.ok(CacheEntrySchema.safeParse(view).success, JSON.stringify(CacheEntrySchema.safeParse(view).error?.issues));
  });

  it('takes the newer word: a status announcing the suspension before the next telemetry, and the lifting of it', () => {
    const since = iso(T0 + 2000);
    const announced = snapshot({
      dets: dets(T0),
      telemetry: telemetry(T0 + 1900, { detection: 'running', fps: 10 }),
      status: status(T0 + 2000, { detection_suspended: { since, reason: 'THERMAL_CRITICAL at 91 C' } }),
    });
    const view = entryView(announced, 120, T0 + 2050);
    assert.deepEqual([view.detection, view.person_count, view.suspended_since], ['suspended', null, since]);
    const lifted = snapshot({
      dets: dets(T0),
      telemetry: telemetry(T0 + 9000, { detection: 'suspended', suspended_since: since }),
      status: status(T0 + 9050, { thermal_state: 'THERMAL_WARN', detection_suspended: null }),
    });
    assert.deepEqual([entryView(lifted, 120, T0 + 9060).detection, entryView(lifted, 120, T0 + 9060).person_count], ['running', 3]);
  });

  it('shows running detection as before, and says nothing for a device that never tells', () => {
    const running = snapshot({ dets: dets(T0), telemetry: telemetry(T0, { detection: 'running', fps: 10 }) });
    assert.deepEqual([entryView(running, 120, T0).detection, entryView(running, 120, T0).person_count], ['running', 3]);
    const silent = snapshot({ dets: dets(T0), telemetry: telemetry(T0, {}) });
    assert.deepEqual([entryView(silent, 120, T0).detection, entryView(silent, 120, T0).person_count], [null, 3]);
  });
});

describe('cache entry of a device that went offline', () => {
  it('stamps offline_since when the last-will arrives and keeps when the device itself was last heard', () => {
    const will = { state: 'offline', reason: 'connection_lost', device_id: 'cam-1', will_set_at: iso(T0 - 3_600_000), thermal_state: null, die_temp_c: null };
    const d = snapshot({
      telemetry: telemetry(T0 + 4000, { detection: 'running', fps: 10 }),
      dets: dets(T0 + 4000),
      status: { message: will, at: T0 + 9000 },
    });
    const view = entryView(d, 120, T0 + 9500);
    assert.equal(view.online, false);
    assert.equal(view.offline_since, iso(T0 + 9000));
    assert.equal(view.last_seen_at, iso(T0 + 4000), 'the will is the broker’s word, not a sign of life');
    assert.ok(CacheEntrySchema.safeParse(view).success, JSON.stringify(CacheEntrySchema.safeParse(view).error?.issues));
  });

  it('dates a graceful offline status by its own timestamp, and has no offline_since while online', () => {
    const d = snapshot({ telemetry: telemetry(T0, {}), status: status(T0 + 1000, { state: 'offline', reason: 'shutdown' }) });
    const view = entryView(d, 120, T0 + 2000);
    assert.deepEqual([view.offline_since, view.last_seen_at], [iso(T0 + 1000), iso(T0 + 1000)]);
    const online = entryView(snapshot({ telemetry: telemetry(T0, {}), status: status(T0 + 1000) }), 120, T0 + 2000);
    assert.deepEqual([online.offline_since, online.last_seen_at], [null, iso(T0 + 1000)]);
  });
});
