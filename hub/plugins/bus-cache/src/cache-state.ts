import { z } from 'zod';
import { INVALID_REASONS } from './service.js';
import { DeviceCache } from './device-cache.js';

/** The hub state key of the latest cache (`<data dir>/state/bus-cache.json`). */
export const CACHE_STATE_KEY = 'bus-cache';
/** Below the store's 32 MiB bound: the devices heard from last are kept first, the rest dropped. */
export const CACHE_STATE_MAX_BYTES = 24 * 1024 * 1024;

const Obj = z.record(z.string(), z.unknown());
const DeviceState = z.object({
  device_id: z.string().min(1).max(128),
  newest_at: z.number().nonnegative(),
  latest: z
    .array(
      z.object({
        suffix: z.string().min(1).max(128),
        message: Obj,
        received_at: z.number().nonnegative(),
        retain: z.boolean(),
        count: z.number().int().min(1),
      }),
    )
    .max(64),
  invalid: z
    .array(
      z.object({
        suffix: z.string().max(128),
        count: z.number().int().min(1),
        last_reason: z.enum(INVALID_REASONS),
        last_at: z.number(),
        last_issue: z.string().max(1000).optional(),
      }),
    )
    .max(64),
  recent_chunks: z.array(Obj).max(100),
  anomaly_alerts: z.array(Obj).max(100),
});
type DeviceState = z.output<typeof DeviceState>;

export type CacheState = { devices: DeviceState[] };

/** Checks a saved cache before any of it is used; `maxDevices` is the cache's own bound. */
export function parseCacheState(raw: unknown, maxDevices: number): CacheState {
  return z.object({ devices: z.array(DeviceState).max(maxDevices) }).parse(raw);
}

/**
 * What a restart must not forget of the cache: each device's latest message per topic with the
 * time it was received (so that its age, and whether it is stale or online, stay true after the
 * restart), its counts, recent chunks and anomaly alerts (the incidents). Devices heard from last
 * come first and fill the byte budget; the ingest counters are of this run and start again.
 */
export function snapshotCache(devices: Iterable<DeviceCache>, maxBytes = CACHE_STATE_MAX_BYTES): CacheState & { dropped: number } {
  const newestFirst = [...devices].sort((a, b) => b.newestAt - a.newestAt);
  const out: DeviceState[] = [];
  let bytes = 0;
  for (const d of newestFirst) {
    const state = deviceState(d);
    bytes += Buffer.byteLength(JSON.stringify(state)) + 1;
    if (bytes > maxBytes) break;
    out.push(state);
  }
  return { devices: out, dropped: newestFirst.length - out.length };
}

/** Registered symbol of a value its owner serialised itself (hub-services.ts STATE_JSON); plugins reach it without the host. */
const STATE_JSON = Symbol.for('lookout.state-json');

/**
 * The same saved cache as `snapshotCache`, as JSON text made of pieces: each device's state is
 * serialised once per change (DeviceCache.version, remembered in `memo`) and the pieces joined,
 * so a save every few seconds costs little more than the devices that changed since, and the
 * store writes the text as it is (no second serialisation of the whole).
 */
export function serializedCache(
  devices: Iterable<DeviceCache>,
  memo: WeakMap<DeviceCache, { version: number; json: string; bytes: number }>,
  maxBytes = CACHE_STATE_MAX_BYTES,
): { value: { [STATE_JSON]: true; json: string }; dropped: number } {
  const newestFirst = [...devices].sort((a, b) => b.newestAt - a.newestAt);
  const parts: string[] = [];
  let bytes = 0;
  for (const d of newestFirst) {
    let m = memo.get(d);
    if (!m || m.version !== d.version) {
      const json = JSON.stringify(deviceState(d));
      m = { version: d.version, json, bytes: Buffer.byteLength(json) };
      memo.set(d, m);
    }
    bytes += m.bytes + 1;
    if (bytes > maxBytes) break;
    parts.push(m.json);
  }
  return { value: { [STATE_JSON]: true, json: `{"devices":[${parts.join(',')}]}` }, dropped: newestFirst.length - parts.length };
}

function deviceState(d: DeviceCache): DeviceState {
  return {
    device_id: d.deviceId,
    newest_at: d.newestAt,
    latest: [...d.latest].map(([suffix, l]) => ({ suffix, message: l.message, received_at: l.receivedAt, retain: l.retain, count: l.count })),
    invalid: [...d.invalid].map(([suffix, s]) => ({
      suffix,
      count: s.count,
      last_reason: s.lastReason,
      last_at: s.lastAt,
      ...(s.lastIssue !== undefined ? { last_issue: s.lastIssue } : {}),
    })),
    recent_chunks: [...d.recentChunks],
    anomaly_alerts: [...d.anomalyAlerts],
  };
}

/** A device as it was saved, marked restored (its times are those it was received at before the restart). */
export function restoreDevice(s: DeviceState, limits: { maxTopics: number; maxAlerts: number; maxChunks: number }, restoredAt: number): DeviceCache {
  const d = new DeviceCache(s.device_id, limits);
  for (const l of s.latest.slice(0, limits.maxTopics))
    d.latest.set(l.suffix, { message: l.message, receivedAt: l.received_at, retain: l.retain, count: l.count });
  for (const i of s.invalid) {
    d.invalid.set(i.suffix, {
      count: i.count,
      lastReason: i.last_reason,
      lastAt: i.last_at,
      ...(i.last_issue !== undefined ? { lastIssue: i.last_issue } : {}),
    });
  }
  d.recentChunks = s.recent_chunks.slice(0, limits.maxChunks);
  d.anomalyAlerts = s.anomaly_alerts.slice(0, limits.maxAlerts);
  d.newestAt = s.newest_at;
  d.restoredAt = restoredAt;
  return d;
}
