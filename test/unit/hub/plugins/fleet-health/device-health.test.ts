import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceCache } from '../../../../../hub/plugins/bus-cache/src/device-cache.js';
import { entryView } from '../../../../../hub/plugins/bus-cache/src/entry-view.js';
import { deviceHealth } from '../../../../../hub/plugins/fleet-health/src/device-health.js';
import type { RegisteredDevice } from '../../../../../hub/plugins/registry/src/service.js';

const NOW = Date.parse('2025-06-01T12:00:00Z');
const STALE_SEC = 120;

function device(messages: Record<string, Record<string, unknown>>, at = NOW): DeviceCache {
  const d = new DeviceCache('cam-1', { maxTopics: 64, maxAlerts: 20, maxChunks: 20 });
  for (const [suffix, m] of Object.entries(messages)) {
    d.store(suffix, m, at, false, at);
    if (suffix === 'data_manifest') d.addChunks(m.chunks as Record<string, unknown>[]);
  }
  return d;
}

const registered: RegisteredDevice = {
  deviceId: 'cam-1',
  ips: ['127.0.0.1'],
  labels: ['cam-1'],
  roles: ['camera'],
  ports: { tools: 8765 },
  source: 'hello',
  namedInFile: false,
  toolUrl: 'http://127.0.0.1:8765/mcp',
  lastHelloAt: NOW,
};

const online = { state: 'online', thermal_state: 'NORMAL', die_temp_c: 50, timestamp: new Date(NOW).toISOString() };
const health = (chunkCount?: number) => ({
  timestamp: new Date(NOW).toISOString(),
  status: 'ok',
  storage_health: 'OK',
  cert_fingerprint_present: true,
  serial: 'S1',
  role: 'cam-1',
  storage: { free_gb: 10, used_pct: 20, ...(chunkCount !== undefined ? { chunk_count: chunkCount } : {}) },
});
const chunk = (startedAt: number) => ({
  name: 'c.h265',
  started_at: new Date(startedAt).toISOString(),
  duration_s: 60,
  keyframe_count: 60,
  justified: true,
  rfdetr_stride_fps: 5,
});

function healthOf(d: DeviceCache, reg: RegisteredDevice | null = registered, now = NOW) {
  return deviceHealth('cam-1', d, entryView(d, STALE_SEC, now), reg ?? undefined, now);
}

describe('fleet health of one device', () => {
  it('never reports a recorder as ok from the health message’s overall status', () => {
    // Before: recorder.status was health.status ("ok") whether or not the device records anything.
    const none = healthOf(device({ status: online, health: health(0) })).recorder;
    assert.equal(none.status, 'none');
    assert.match(none.reason ?? '', /no recording chunk/);
    const unknown = healthOf(device({ status: online, health: health() })).recorder;
    assert.equal(unknown.status, null);
    assert.match(unknown.reason ?? '', /no data_manifest and no chunk count/);
    const counted = healthOf(device({ status: online, health: health(12) })).recorder;
    assert.equal(counted.status, null);
    assert.equal(counted.chunk_count, 12);
    assert.match(counted.reason ?? '', /12 chunks.*no data_manifest/);
  });

  it('says recording from a recent chunk and stalled from an old one', () => {
    const manifest = (startedAt: number) => ({ timestamp: new Date(NOW).toISOString(), chunks: [chunk(startedAt)] });
    const recording = healthOf(device({ status: online, health: health(3), data_manifest: manifest(NOW - 90_000) })).recorder;
    assert.equal(recording.status, 'recording');
    assert.equal(recording.reason, null);
    const stalled = healthOf(device({ status: online, health: health(3), data_manifest: manifest(NOW - 3_600_000) })).recorder;
    assert.equal(stalled.status, 'stalled');
    assert.match(stalled.reason ?? '', /ended 3540 s ago/);
  });

  it('takes a chunk to end at its ended_at, not at started_at + duration_s (a device that dropped pictures)', () => {
    // 60 s of video recorded over 250 s of real time, ended 100 s ago: recording, not ended 240 s ago.
    const slow = { ...chunk(NOW - 340_000), ended_at: new Date(NOW - 100_000).toISOString() };
    const manifest = { timestamp: new Date(NOW).toISOString(), chunks: [slow] };
    const r = healthOf(device({ status: online, health: health(3), data_manifest: manifest })).recorder;
    assert.equal(r.status, 'recording', r.reason ?? '');
  });

  it('does not vouch for the recorder of a device that is not online', () => {
    const offline = { ...online, state: 'offline' };
    const r = healthOf(device({ status: offline, health: health(0) })).recorder;
    assert.equal(r.status, null);
    assert.match(r.reason ?? '', /offline/);
  });

  it('counts a killed device as unreachable, whatever tool URL the registry keeps for it', () => {
    const alive = healthOf(device({ status: online, health: health(0) }));
    assert.equal(alive.readiness.checks.reachable, true);
    // Before: reachable was true for any device with a tool URL, offline (last will) or silent (stale).
    const killed = healthOf(device({ status: { ...online, state: 'offline' }, health: health(0) }));
    assert.equal(killed.presence, 'offline');
    assert.equal(killed.readiness.checks.reachable, false);
    assert.ok(killed.readiness.failing.includes('reachable'));
    const silent = healthOf(device({ status: online, health: health(0) }, NOW - 600_000));
    assert.equal(silent.presence, 'stale');
    assert.equal(silent.readiness.checks.reachable, false);
    const unregistered = healthOf(device({ status: online, health: health(0) }), null);
    assert.equal(unregistered.readiness.checks.reachable, false);
  });
});
