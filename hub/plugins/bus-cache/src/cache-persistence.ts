import type { HubStateStore, StateKeeper } from 'lookout/hub';
import type { Logger } from 'lookout/core';
import type { DebugRing } from '../../debug-ring/src/service.js';
import { CACHE_STATE_KEY, parseCacheState, restoreDevice, serializedCache } from './cache-state.js';
import type { DeviceCache } from './device-cache.js';
import type { Ingest } from './ingest.js';

/**
 * Reloads the cache the hub saved before its restart (so a device that went offline is still
 * listed, offline and stale, with its last payload and incidents) and keeps it saved from now on.
 * A saved cache that cannot be used is a warning: the store set it aside and the cache starts empty.
 */
export async function persistCache(
  store: HubStateStore,
  ingest: Ingest,
  deps: { ring: DebugRing; log: Logger; maxDevices: number; now?: () => number },
): Promise<StateKeeper> {
  const loaded = await store.load(CACHE_STATE_KEY, (raw) => parseCacheState(raw, deps.maxDevices));
  if (loaded.warning) {
    deps.log.warn(loaded.warning);
    deps.ring.record({ kind: 'hub', message: loaded.warning });
  }
  if (loaded.value) {
    const at = deps.now?.() ?? Date.now();
    const restored = ingest.restore(loaded.value.devices.map((s) => restoreDevice(s, ingest.deviceLimits, at)));
    if (restored > 0) deps.ring.record({ kind: 'hub', message: `restored ${restored} device(s) of the latest cache saved before the restart` });
  }
  let warnedDrop = false;
  // Each device's saved form is remade only when it changed since the last save.
  const memo = new WeakMap<DeviceCache, { version: number; json: string; bytes: number }>();
  // The cache is taken at once and its JSON made over the next turns (serializedCache).
  return store.keep(CACHE_STATE_KEY, () =>
    serializedCache(ingest.devices.values(), memo).then(({ dropped, value }) => {
      if (dropped > 0 && !warnedDrop) {
        warnedDrop = true;
        deps.log.warn({ dropped }, 'the saved latest cache is over its byte bound: the devices heard from longest ago are not saved');
      }
      return value;
    }),
  );
}
