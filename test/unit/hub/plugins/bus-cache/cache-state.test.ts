import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCacheState, serializedCache, snapshotCache } from '../../../../../hub/plugins/bus-cache/src/cache-state.js';
import { DeviceCache } from '../../../../../hub/plugins/bus-cache/src/device-cache.js';
import { MemoryStateStore } from '../../../../../hub/src/state/memory-state-store.js';

const T0 = Date.parse('2026-11-24T10:00:00.000Z');
const limits = { maxTopics: 8, maxAlerts: 3, maxChunks: 3 };

function device(id: string, at: number): DeviceCache {
  const d = new DeviceCache(id, limits);
  d.store('status', { state: 'online', timestamp: new Date(at).toISOString(), device_id: id }, at, true, at);
  d.store('telemetry', { timestamp: new Date(at).toISOString(), telemetry: { fps: 10 } }, at, false, at);
  d.countInvalid('dets', 'schema', at, 'p: too big');
  d.addAlert({ type: 'incident', received_at: new Date(at).toISOString() });
  return d;
}

describe('the saved latest cache as pieces (serializedCache)', () => {
  it('is the same saved cache as snapshotCache, newest first, within the byte bound', async () => {
    const devices = [device('cam-1', T0), device('cam-2', T0 + 5), device('cam-3', T0 + 2)];
    const memo = new WeakMap();
    const { value, dropped } = await serializedCache(devices, memo);
    assert.equal(dropped, 0);
    assert.deepEqual(JSON.parse(value.json), JSON.parse(JSON.stringify({ devices: snapshotCache(devices).devices })));
    assert.deepEqual(
      parseCacheState(JSON.parse(value.json), 10).devices.map((d) => d.device_id),
      ['cam-2', 'cam-3', 'cam-1'],
    );
    const one = Buffer.byteLength(JSON.stringify(snapshotCache([devices[0]]).devices[0]));
    const bounded = await serializedCache(devices, memo, 2 * (one + 1));
    assert.equal(bounded.dropped, 1, 'the device heard from longest ago is left out');
  });

  it('a device that changed is saved as it is now; the others reuse their pieces', async () => {
    const d = device('cam-1', T0);
    const memo = new WeakMap();
    const first = (await serializedCache([d], memo)).value.json;
    assert.equal((await serializedCache([d], memo)).value.json, first);
    d.store('telemetry', { timestamp: new Date(T0 + 100).toISOString(), telemetry: { fps: 3 } }, T0 + 100, false, T0 + 100);
    const saved = JSON.parse((await serializedCache([d], memo)).value.json) as {
      devices: { latest: { suffix: string; message: { telemetry?: { fps: number } } }[] }[];
    };
    assert.equal(saved.devices[0].latest.find((l) => l.suffix === 'telemetry')?.message.telemetry?.fps, 3);
  });

  it('a store writes the pieces as the value, and loads them back', async () => {
    const store = new MemoryStateStore({ intervalMs: 10 });
    const devices = [device('cam-1', T0)];
    const keeper = store.keep('bus-cache', async () => (await serializedCache(devices, new WeakMap())).value);
    keeper.changed();
    await keeper.flush();
    const loaded = await store.load('bus-cache', (raw) => parseCacheState(raw, 10));
    assert.deepEqual(loaded.value, { devices: snapshotCache(devices).devices });
    await store.close();
  });

  it('saves the cache as it was at the call, making its JSON over later turns without holding the event loop long', async () => {
    const devices = Array.from({ length: 3000 }, (_, i) => device(`cam-${i}`, T0 + i));
    const expected = JSON.stringify({ devices: snapshotCache(devices).devices });
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const saving = serializedCache(devices, new WeakMap());
    // Changed right after the call: the save keeps what the devices were when it was asked for.
    for (const d of devices) d.store('telemetry', { timestamp: new Date(T0 + 10_000).toISOString(), telemetry: { fps: 1 } }, T0 + 10_000, false, T0 + 10_000);
    const { value } = await saving;
    clearInterval(ticker);
    assert.deepEqual(JSON.parse(value.json), JSON.parse(expected));
    assert.ok(turns > 0, 'timers ran while the JSON was made');
  });
});
