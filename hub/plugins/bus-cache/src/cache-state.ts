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

/** Making the saved JSON pauses for a turn of the event loop after this long, so that a save never holds the ingest up. */
const SLICE_MS = 4;

type Piece = { version: number; json: string; bytes: number };
type Taken = Piece | { device: DeviceCache; version: number; state: DeviceState };

/**
 * The same saved cache as `snapshotCache`, as JSON text made of pieces, in two steps so that a save
 * never stalls the ingest (the JSON of 10 000 devices is over 100 ms of work). What is saved is
 * taken at the call: each changed device's state (fresh arrays and counts around the stored
 * messages, which are replaced, never changed in place). Its JSON is made over the following turns,
 * a few milliseconds at a time. A device's JSON is made once per change (DeviceCache.version,
 * remembered in `memo`) and the pieces joined, and the store writes the text as it is.
 */
export function serializedCache(
  devices: Iterable<DeviceCache>,
  memo: WeakMap<DeviceCache, Piece>,
  maxBytes = CACHE_STATE_MAX_BYTES,
): Promise<{ value: { [STATE_JSON]: true; json: string }; dropped: number }> {
  const newestFirst = [...devices].sort((a, b) => b.newestAt - a.newestAt);
  const taken = newestFirst.map((device): Taken => {
    const m = memo.get(device);
    return m && m.version === device.version ? m : { device, version: device.version, state: deviceState(device) };
  });
  return joinPieces(taken, memo, maxBytes);
}

async function joinPieces(
  taken: Taken[],
  memo: WeakMap<DeviceCache, Piece>,
  maxBytes: number,
): Promise<{ value: { [STATE_JSON]: true; json: string }; dropped: number }> {
  const parts: string[] = [];
  let bytes = 0;
  let sliceStart = performance.now();
  for (const t of taken) {
    let piece: Piece;
    if ('state' in t) {
      const json = JSON.stringify(t.state);
      piece = { version: t.version, json, bytes: Buffer.byteLength(json) };
      memo.set(t.device, piece);
      if (performance.now() - sliceStart > SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    } else piece = t;
    bytes += piece.bytes + 1;
    if (bytes > maxBytes) break;
    parts.push(piece.json);
  }
  return { value: { [STATE_JSON]: true, json: `{"devices":[${parts.join(',')}]}` }, dropped: taken.length - parts.length };
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
