import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeviceCache } from '../../../../../hub/plugins/bus-cache/src/device-cache.js';
import { entryView } from '../../../../../hub/plugins/bus-cache/src/entry-view.js';
import { LatestJson } from '../../../../../hub/plugins/bus-cache/src/latest-json.js';
import { HubCacheEntrySchema, LatestResponse } from '../../../../../hub/plugins/bus-cache/src/schemas.js';

const T0 = Date.parse('2026-11-24T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const limits = { maxTopics: 16, maxAlerts: 5, maxChunks: 5 };
const STALE_SEC = 60;

function device(id: string, at: number): DeviceCache {
  const d = new DeviceCache(id, limits);
  d.store('status', { state: 'online', thermal_state: 'NORMAL', die_temp_c: 47, timestamp: iso(at), device_id: id }, at, true, at);
  d.store('telemetry', { timestamp: iso(at), camera_id: 'front', detections: [], telemetry: { die_temp: 47, fps: 10 } }, at, false, at);
  d.store('dets', { timestamp: iso(at), camera_id: 'front', dets: [{ c: 0, p: 0.9, b: [1, 2, 3, 4] }], person_count: 1 }, at, false, at);
  d.countInvalid('dets', 'schema', at, 'dets.0.p: too big');
  d.addAlert({ type: 'incident', topic: `devices/${id}/events/incident`, received_at: iso(at) });
  return d;
}

/** The declared keys of an entry, in the order the route's response schema declares them. */
const ENTRY_KEYS = Object.keys(HubCacheEntrySchema.shape);

/**
 * The answer by JSON.stringify, from first principles: entryView of each device, its keys in the
 * schema's order (the order the compiled writer follows), as text.
 */
function plainAnswer(devices: Map<string, DeviceCache>, now: number, stale?: string): string {
  const out: Record<string, unknown> = {};
  let count = 0;
  for (const id of [...devices.keys()].sort()) {
    const view = entryView(devices.get(id)!, STALE_SEC, now) as unknown as Record<string, unknown>;
    if (stale !== undefined && String(view.stale) !== stale) continue;
    const ordered = Object.fromEntries(ENTRY_KEYS.filter((k) => Object.hasOwn(view, k)).map((k) => [k, view[k]]));
    Object.defineProperty(out, id, { value: ordered, enumerable: true, writable: true, configurable: true });
    count++;
  }
  return JSON.stringify({ devices: out, count, stale_sec: STALE_SEC, generated_at: iso(now) });
}

describe('LatestJson: /fleet/mqtt/latest made of entries serialised once', () => {
  it('answers exactly what entryView gives, byte for byte, at any moment, for any filter, whatever the device ids', () => {
    const devices = new Map<string, DeviceCache>();
    let membership = 0;
    for (const [id, at] of [
      ['cam-1', T0],
      ['cam-"2":x', T0 - 120_000],
      ['__proto__', T0 - 1_000],
      ['cam-ünï', T0 - 30_000],
    ] as const) {
      devices.set(id, device(id, at));
      membership++;
    }
    const latest = new LatestJson(STALE_SEC);
    for (const now of [T0 + 10, T0 + 45_000, T0 + 61_500]) {
      for (const stale of [undefined, 'true', 'false']) {
        const text = latest.answer(devices, latest.ids(devices, membership), now, stale);
        assert.equal(text, plainAnswer(devices, now, stale), `at +${now - T0} ms, stale=${stale}`);
        // Every field entryView gives is one the schema declares (the writer writes declared fields only), and the answer is of its declared shape.
        for (const id of devices.keys()) assert.deepEqual(Object.keys(entryView(devices.get(id)!, STALE_SEC, now)).sort(), [...ENTRY_KEYS].sort());
        LatestResponse.parse(JSON.parse(text));
      }
    }
  });

  it('a change to a device is in the next answer (its entry is made again), and a new device too', () => {
    const devices = new Map([['cam-1', device('cam-1', T0)]]);
    let membership = 1;
    const latest = new LatestJson(STALE_SEC);
    const read = (now: number) => JSON.parse(latest.answer(devices, latest.ids(devices, membership), now, undefined)) as { devices: Record<string, any> };
    assert.equal(read(T0 + 5).devices['cam-1'].payload.telemetry.fps, 10);
    const d = devices.get('cam-1')!;
    d.store('telemetry', { timestamp: iso(T0 + 100), camera_id: 'front', detections: [], telemetry: { die_temp: 50, fps: 7 } }, T0 + 100, false, T0 + 100);
    d.store('status', { state: 'offline', timestamp: iso(T0 + 200), device_id: 'cam-1' }, T0 + 200, true, T0 + 200);
    const after = read(T0 + 300).devices['cam-1'];
    assert.equal(after.payload.telemetry.fps, 7);
    assert.equal(after.online, false);
    assert.equal(after.status.state, 'offline');
    assert.ok(d.annotateAlert('devices/cam-1/events/incident', iso(T0), { summary: 'a person fell' }));
    assert.equal(read(T0 + 400).devices['cam-1'].anomaly_alerts[0].summary, 'a person fell');
    devices.set('cam-0', device('cam-0', T0));
    membership++;
    assert.deepEqual(Object.keys(read(T0 + 500).devices), ['cam-0', 'cam-1']);
  });
});
