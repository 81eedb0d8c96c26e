import { setOwn } from 'lookout/core';
import type { DeviceSnapshot, EntryView } from './service.js';

/** Whether a device counts as online: its latest status says so and it is not stale. */
export function isOnline(d: DeviceSnapshot, staleSec: number, now: number): boolean {
  return d.latest.get('status')?.message.state === 'online' && (now - d.newestAt) / 1000 <= staleSec;
}

/**
 * A device as `GET /fleet/mqtt/latest` shows it: the spec's fields (status, payload = the latest
 * telemetry message, dets, recent_chunks, anomaly_alerts, stale_sec) and ours (age_sec, stale,
 * online, per-topic counts, invalid counts). Online means the latest status says online and the
 * device is not stale: a device that vanished without its last-will is not reported online. Its
 * hello is not repeated here: /fleet/registry shows it. Built for immediate serialisation (with a
 * thousand devices this runs per request), so arrays are shared, not copied.
 */
export function entryView(d: DeviceSnapshot, staleSec: number, now: number): EntryView {
  const status = d.latest.get('status')?.message ?? null;
  const dets = d.latest.get('dets')?.message;
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
    person_count: typeof dets?.person_count === 'number' ? dets.person_count : null,
    health: d.latest.get('health')?.message ?? null,
    recent_chunks: d.recentChunks,
    anomaly_alerts: d.anomalyAlerts,
    stale_sec: staleSec,
    age_sec: Math.round(age * 1000) / 1000,
    stale,
    online: status?.state === 'online' && !stale,
    last_message_at: d.newestAt > 0 ? isoOf(d.newestAt) : null,
    topics,
    invalid,
  };
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
