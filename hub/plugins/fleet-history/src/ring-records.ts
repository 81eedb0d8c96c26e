import { isObject } from 'lookout/core';
import type { DebugEventInput } from '../../debug-ring/src/service.js';
import type { HistoryEvent } from './service.js';

/** Ring kinds that are audits (issue 29 item 4): what an agent, a remediation or a provisioning did to a device. */
export const AUDIT_KINDS: ReadonlySet<string> = new Set(['svc_agent', 'remediation', 'provision']);
/** Bytes of an understanding kept; past it the track ids go (the counts stay), then all but its outcome. */
export const MAX_UNDERSTANDING_BYTES = 32 * 1024;
/** Bytes of an audit's details kept; past it only who, what and the outcome. */
const MAX_AUDIT_DETAILS_BYTES = 8192;

/**
 * A debug ring record as the history keeps it, or undefined for one it does not keep: the media
 * plugin's `video_understand` (the understanding of an incident, dated by the incident's own time
 * so the incident finds it) and the audits (svc_agent, remediation, provision).
 */
export function historyEventOfRing(e: DebugEventInput, atMs: number): HistoryEvent | undefined {
  if (e.device_id === undefined) return undefined;
  if (e.kind === 'video_understand') {
    if (!isObject(e.details)) return undefined;
    const incidentAt = typeof e.details.incident_at === 'string' ? Date.parse(e.details.incident_at) : NaN;
    if (!Number.isSafeInteger(incidentAt)) return undefined;
    return { deviceId: e.device_id, at: incidentAt, kind: 'understanding', name: 'incident', trackId: null, body: boundedUnderstanding(e.details) };
  }
  if (!AUDIT_KINDS.has(e.kind)) return undefined;
  return { deviceId: e.device_id, at: atMs, kind: 'audit', name: e.kind, trackId: null, body: auditBody(e) };
}

/** Who did what to the device, and how it went, from the ring record each source writes. */
function auditBody(e: DebugEventInput): Record<string, unknown> {
  const d = isObject(e.details) ? e.details : {};
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  let who: string | null;
  let what: string | null;
  let outcome: string | null;
  if (e.kind === 'svc_agent') {
    who = str(d.agent) ?? 'svc-agent';
    what = str(d.tool);
    // execute-plan.ts writes `svc-agent step <i> <tool>: <outcome>`.
    const colon = e.message.indexOf(': ');
    outcome = colon >= 0 ? e.message.slice(colon + 2) : null;
  } else if (e.kind === 'remediation') {
    who = 'remediate';
    what = str(d.remedy) === null ? null : `${String(d.remedy)}${str(d.module) ? ` (${String(d.module)})` : ''}`;
    outcome = str(d.status);
  } else {
    who = 'provision';
    what = str(d.step);
    outcome = str(d.status);
  }
  const details = JSON.stringify(d).length <= MAX_AUDIT_DETAILS_BYTES ? d : { truncated: true };
  return { who, what, outcome, message: e.message.slice(0, 1000), details };
}

function boundedUnderstanding(u: Record<string, unknown>): Record<string, unknown> {
  if (JSON.stringify(u).length <= MAX_UNDERSTANDING_BYTES) return u;
  const { track_ids: _ids, ...counts } = isObject(u.result) ? u.result : {};
  const result = isObject(u.result) ? { ...counts, track_ids_dropped: true } : u.result;
  const smaller = { ...u, result };
  if (JSON.stringify(smaller).length <= MAX_UNDERSTANDING_BYTES) return smaller;
  return { truncated: true, status: u.status ?? null, incident_at: u.incident_at ?? null, chunk: u.chunk ?? null, error: u.error ?? null };
}
