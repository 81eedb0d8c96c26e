import { setOwn } from 'lookout/core';
import type { DeviceSnapshot, EntryView } from './service.js';

/** Whether a device counts as online: its latest status says so and it is not stale. */
export function isOnline(d: DeviceSnapshot, staleSec: number, now: number): boolean {
  return d.latest.get('status')?.message.state === 'online' && (now - d.newestAt) / 1000 <= staleSec;
}

/**
 * A device as `GET /fleet/mqtt/latest` shows it: the spec's fields (status, payload = the latest
 * telemetry message, dets, recent_chunks, anomaly_alerts, stale_sec) and ours (age_s, stale,
 * online, per-topic counts, invalid counts). Online means the latest status says online and the
 * device is not stale: a device that vanished without its last-will is not reported online. Its
 * hello is not repeated here: /fleet/registry shows it. Built for immediate serialisation (with a
 * thousand devices this runs per request), so arrays are shared, not copied.
 */
export function entryView(d: DeviceSnapshot, staleSec: number, now: number): EntryView {
  const status = d.latest.get('status')?.message ?? null;
  const detection = detectionOf(d);
  // While suspended the last dets are yesterday's scene: no detections and no count, with the reason beside.
  const dets = detection.state === 'suspended' ? undefined : d.latest.get('dets')?.message;
  const age = Math.max(0, (now - d.newestAt) / 1000);
  const stale = age > staleSec;
  const topics: EntryView['topics'] = {};
  for (const [suffix, l] of d.latest) setOwn(topics, suffix, { received_at: isoOf(l.receivedAt), count: l.count, retained: l.retain });
  const invalid: EntryView['invalid'] = {};
  for (const [suffix, s] of d.invalid) {
    setOwn(invalid, suffix, {
      count: s.count,
      last_reason: s.lastReason,
      last_at: isoOf(s.lastAt),
      ...(s.lastIssue !== undefined ? { last_issue: s.lastIssue } : {}),
    });
  }
  return {
    device_id: d.deviceId,
    status,
    payload: d.latest.get('telemetry')?.message ?? null,
    dets: Array.isArray(dets?.dets) ? (dets.dets as unknown[]) : [],
    person_count: personCountIn(dets),
    detection: detection.state,
    suspended_since: detection.since,
    health: d.latest.get('health')?.message ?? null,
    recent_chunks: d.recentChunks,
    anomaly_alerts: d.anomalyAlerts,
    stale_sec: staleSec,
    age_s: Math.round(age * 1000) / 1000,
    stale,
    online: status?.state === 'online' && !stale,
    last_message_at: d.newestAt > 0 ? isoOf(d.newestAt) : null,
    ...presence(d),
    topics,
    invalid,
  };
}

/** The latest dets' person count; none while detection is suspended (those dets are yesterday's scene). */
export function personCountOf(d: DeviceSnapshot): number | null {
  return detectionOf(d).state === 'suspended' ? null : personCountIn(d.latest.get('dets')?.message);
}

function personCountIn(dets: Record<string, unknown> | undefined): number | null {
  return typeof dets?.person_count === 'number' ? dets.person_count : null;
}

/**
 * Since when the device is offline, and when it was last heard itself. A last-will is the broker's
 * word, sent whenever the connection dropped and set long before: it dates from its arrival, and
 * says nothing of when the device was last seen. A graceful offline status is the device's own.
 */
export function presence(d: DeviceSnapshot): { offline_since: string | null; last_seen_at: string | null } {
  const status = d.latest.get('status');
  const offline = status?.message.state === 'offline' ? status : undefined;
  let offlineSince: number | null = null;
  if (offline) {
    const stamped = typeof offline.message.timestamp === 'string' ? Date.parse(offline.message.timestamp) : NaN;
    offlineSince = Number.isFinite(stamped) ? Math.min(stamped, offline.receivedAt) : offline.receivedAt;
  }
  let seen = 0;
  for (const [suffix, l] of d.latest) {
    if (suffix === 'status' && l.message.state === 'offline' && l.message.timestamp === undefined) continue;
    // A retained message replayed at subscribe is as old as its own timestamp, not as its arrival.
    const stamped = l.retain && typeof l.message.timestamp === 'string' ? Date.parse(l.message.timestamp) : NaN;
    seen = Math.max(seen, Number.isFinite(stamped) ? Math.min(stamped, l.receivedAt) : l.receivedAt);
  }
  return { offline_since: offlineSince === null ? null : isoOf(offlineSince), last_seen_at: seen > 0 ? isoOf(seen) : null };
}

type Detection = { state: EntryView['detection']; since: string | null };
const DETECTION_STATES: ReadonlySet<unknown> = new Set(['running', 'suspended', 'off']);

/**
 * Whether the device detects, from the newer of its telemetry (`telemetry.detection`, every frame)
 * and its status (`detection_suspended`, from the thermal governor, on every change); null when
 * neither says (a device that predates these fields).
 */
export function detectionOf(d: DeviceSnapshot): Detection {
  const telemetry = d.latest.get('telemetry');
  const block = telemetry?.message.telemetry as Record<string, unknown> | undefined;
  const told: Detection | undefined =
    block && DETECTION_STATES.has(block.detection)
      ? {
          state: block.detection as Detection['state'],
          since: block.detection === 'suspended' && typeof block.suspended_since === 'string' ? block.suspended_since : null,
        }
      : undefined;
  const status = d.latest.get('status');
  if (!status || !('detection_suspended' in status.message) || (told && telemetry!.receivedAt >= status.receivedAt))
    return told ?? { state: null, since: null };
  const announced = status.message.detection_suspended as { since?: unknown } | null;
  if (announced) return { state: 'suspended', since: typeof announced.since === 'string' ? announced.since : null };
  // The governor lifted it after the last telemetry: the detector runs again (or was off anyway).
  return { state: told?.state === 'off' ? 'off' : told ? 'running' : null, since: null };
}

/** Date#toISOString, remembered for the last few thousand instants (a view shows each many times). */
const isoMemo = new Map<number, string>();
function isoOf(ms: number): string {
  let s = isoMemo.get(ms);
  if (s === undefined) {
    if (isoMemo.size >= 20_000) isoMemo.clear();
    s = new Date(ms).toISOString();
    isoMemo.set(ms, s);
  }
  return s;
}
