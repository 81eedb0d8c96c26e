import type { DeviceSnapshot } from './service.js';

export interface EntryView {
  device_id: string;
  status: Record<string, unknown> | null;
  payload: Record<string, unknown> | null;
  dets: unknown[];
  person_count: number | null;
  health: Record<string, unknown> | null;
  hello: Record<string, unknown> | null;
  recent_chunks: Record<string, unknown>[];
  anomaly_alerts: Record<string, unknown>[];
  stale_sec: number;
  age_sec: number;
  stale: boolean;
  online: boolean;
  last_message_at: string | null;
  topics: Record<string, { received_at: string; count: number; retained: boolean }>;
  invalid: Record<string, { count: number; last_reason: string; last_at: string; last_issue?: string }>;
}

/**
 * A device as `GET /fleet/mqtt/latest` shows it: the spec's fields (status, payload = the latest
 * telemetry message, dets, recent_chunks, anomaly_alerts, stale_sec) and ours (age_sec, stale,
 * online, per-topic counts, invalid counts). Online means the latest status says online and the
 * device is not stale: a device that vanished without its last-will is not reported online.
 */
export function entryView(d: DeviceSnapshot, staleSec: number, now: number): EntryView {
  const latest = (suffix: string) => d.latest.get(suffix)?.message ?? null;
  const status = latest('status');
  const dets = latest('dets');
  const age = Math.max(0, (now - d.newestAt) / 1000);
  const stale = age > staleSec;
  const topics: EntryView['topics'] = {};
  for (const [suffix, l] of d.latest) topics[suffix] = { received_at: new Date(l.receivedAt).toISOString(), count: l.count, retained: l.retain };
  const invalid: EntryView['invalid'] = {};
  for (const [suffix, s] of d.invalid) {
    invalid[suffix] = { count: s.count, last_reason: s.lastReason, last_at: new Date(s.lastAt).toISOString(), ...(s.lastIssue !== undefined ? { last_issue: s.lastIssue } : {}) };
  }
  return {
    device_id: d.deviceId,
    status,
    payload: latest('telemetry'),
    dets: Array.isArray(dets?.dets) ? (dets.dets as unknown[]) : [],
    person_count: typeof dets?.person_count === 'number' ? dets.person_count : null,
    health: latest('health'),
    hello: latest('hello'),
    recent_chunks: [...d.recentChunks],
    anomaly_alerts: [...d.anomalyAlerts],
    stale_sec: staleSec,
    age_sec: Math.round(age * 1000) / 1000,
    stale,
    online: status?.state === 'online' && !stale,
    last_message_at: d.newestAt > 0 ? new Date(d.newestAt).toISOString() : null,
    topics,
    invalid,
  };
}
