import { z } from 'zod';
import { queryInteger } from 'lookout/core/contracts';
import { LookoutError, type RouteDecl } from 'lookout/core';
import type { DeviceRegistry } from '../../registry/src/service.js';
import { bucketsOf, classIdOf, peopleSeen } from './history-queries.js';
import { Sources, SpanQuery, Target, TimeParam, sourcesOf, spanOf } from './history-params.js';
import type { HistoryEvent, HistoryStore } from './service.js';
import { understandingKey } from './sqlite-history-store.js';

const ClassCounts = z.object({
  max: z.number().int().describe('the most in one dets message'),
  mean: z.number().describe('per dets message of the bucket'),
  unique_tracks: z.number().int().describe('distinct track ids (0 without the tracker layer)'),
});

export const BucketSchema = z.object({
  t: z.number().int().describe('epoch ms of the bucket’s start'),
  frames: z.number().int().describe('dets messages in the bucket'),
  person_max: z.number().int().describe('the person gate’s largest person_count'),
  person_mean: z.number().nullable().describe('mean person_count per dets message; null without dets'),
  classes: z.record(z.string(), ClassCounts).describe('per class name (production map)'),
  thermal_state: z.string().nullable(),
  suspended: z.boolean().describe('detection was suspended in the bucket'),
  storage_health: z.string().nullable(),
});

export const HistoryRangeQuery = {
  from: TimeParam.optional().describe('with `to`/`bucket`: answer buckets from the database from this instant (epoch ms or ISO 8601)'),
  to: TimeParam.optional().describe('end of the buckets, exclusive (default now)'),
  bucket: queryInteger(60, 86_400).optional().describe('bucket width in seconds (60 to 86400; default 60)'),
};

const PeopleQuery = z.object({ target: Target, ...SpanQuery });
const PeopleResponse = z.object({
  target: z.string(),
  person_max: z.number().int().describe('the most persons in one dets message of any device (the person gate’s count)'),
  person_mean: z.number().nullable().describe('mean person_count per dets message over the span'),
  unique_person_tracks: z.number().int().describe('distinct person track ids over the span (0 without the tracker layer)'),
  frames: z.number().int(),
  minutes: z.number().int().describe('minutes of the span with data'),
  devices_with_data: z.array(z.string()),
  sources: Sources,
});

const LastSeenQuery = z.object({
  class: z.string().min(1).max(64).describe('class name (person, car, knife…) or production class id'),
  target: Target.optional().describe('only these devices (all without)'),
});
const LastSeenResponse = z.object({
  class: z.string(),
  seen: z.boolean(),
  device_id: z.string().nullable(),
  at: z.string().nullable().describe('ISO 8601 of the newest dets message naming the class'),
  sources: Sources,
});

/** What `kind` takes (the understandings are served with their incidents, not on their own). */
export const EVENT_KINDS = ['event', 'ocr', 'chunk', 'presence', 'audit'] as const;
const EventsQuery = z.object({
  target: Target,
  kind: z
    .enum(EVENT_KINDS)
    .default('event')
    .describe(
      'event: incidents (with the hub’s understanding) and other events/<type>; ocr: OCR reads per track; chunk: recorded chunks; presence: online/offline changes; audit: what svc-agent execute, remediation and provisioning did to the devices (who, what, outcome)',
    ),
  ...SpanQuery,
  limit: queryInteger(1, 1000).optional().describe('most rows (newest first; default 100)'),
});
const EventsResponse = z.object({
  target: z.string(),
  kind: z.enum(EVENT_KINDS),
  events: z.array(
    z.object({
      device_id: z.string(),
      at: z.string(),
      name: z.string().describe('event type, chunk name, online/offline, or the audit’s source (svc_agent, remediation, provision)'),
      track_id: z.number().int().nullable(),
      body: z.record(z.string(), z.unknown()).describe('the message as the device sent it; for an audit: who, what, outcome, message, details'),
      understanding: z
        .record(z.string(), z.unknown())
        .nullable()
        .optional()
        .describe('incidents only: the hub’s video_understand of it (status, chunk, result…) as the media plugin recorded it; null while none is stored'),
    }),
  ),
  sources: Sources,
});

export const HISTORY_ROUTES: RouteDecl[] = [
  {
    method: 'GET',
    path: '/fleet/history/people',
    errors: ['target_unknown', 'service_unavailable'],
    summary: 'People seen at a device or label between two instants: the devices’ own person counts (max, mean) and distinct person tracks',
    query: PeopleQuery,
    response: PeopleResponse,
  },
  {
    method: 'GET',
    path: '/fleet/history/last-seen',
    errors: ['target_unknown', 'service_unavailable'],
    summary: 'The last time a class was seen (by any device, or those of a target), from the stored history',
    query: LastSeenQuery,
    response: LastSeenResponse,
  },
  {
    method: 'GET',
    path: '/fleet/history/events',
    errors: ['target_unknown', 'service_unavailable'],
    summary: 'Stored incidents (with their understanding), OCR reads, recorded chunks, online/offline changes or audits of a device or label, newest first',
    query: EventsQuery,
    response: EventsResponse,
  },
];

export interface HistoryRouteDeps {
  store: () => HistoryStore;
  /** Writes what the aggregator holds, so an answer includes the newest minute. */
  flush: () => void;
  registry: DeviceRegistry | undefined;
  knows: (deviceId: string) => boolean;
  now: () => number;
  maxSpanDays: number;
}

/** A target's devices: the device of that id, or every device carrying the label. */
export function resolveTarget(target: string, deps: HistoryRouteDeps): string[] {
  if (deps.registry?.get(target) || deps.knows(target)) return [target];
  const labelled = (deps.registry?.list() ?? []).filter((d) => d.labels.includes(target) || d.roles.includes(target)).map((d) => d.deviceId);
  if (labelled.length > 0) return labelled;
  throw new LookoutError('target_unknown', `no device or label ${target} in the registry or the history`, { details: { target } });
}

function span(q: { from?: number; to?: number }, deps: HistoryRouteDeps): { from: number; to: number } {
  const s = spanOf(q, deps.now(), deps.maxSpanDays);
  if (typeof s === 'string') throw new LookoutError('bad_request', s, { details: { from: q.from ?? null, to: q.to ?? null } });
  return s;
}

export function peopleAnswer(q: z.output<typeof PeopleQuery>, deps: HistoryRouteDeps) {
  const devices = resolveTarget(q.target, deps);
  const { from, to } = span(q, deps);
  deps.flush();
  return { target: q.target, ...peopleSeen(deps.store(), devices, from, to), sources: sourcesOf(devices, from, to) };
}

export function lastSeenAnswer(q: z.output<typeof LastSeenQuery>, deps: HistoryRouteDeps) {
  const classId = classIdOf(q.class);
  if (classId === undefined)
    throw new LookoutError('bad_request', `unknown class ${q.class}: a production class name (person, car, knife…) or id`, { details: { class: q.class } });
  const devices = q.target ? resolveTarget(q.target, deps) : [];
  deps.flush();
  const store = deps.store();
  const hit = store.lastSeen(devices, classId);
  const oldest = store.usage().oldest ?? deps.now();
  return {
    class: q.class,
    seen: hit !== undefined,
    device_id: hit?.deviceId ?? null,
    at: hit ? new Date(hit.at).toISOString() : null,
    sources: sourcesOf(devices.length > 0 ? devices : store.deviceIds(), oldest, deps.now()),
  };
}

export function eventsAnswer(q: z.output<typeof EventsQuery>, deps: HistoryRouteDeps) {
  const devices = resolveTarget(q.target, deps);
  const { from, to } = span(q, deps);
  deps.flush();
  const store = deps.store();
  const rows = store.events(devices, q.kind, from, to, q.limit ?? 100);
  const incidents = rows.filter((e) => e.kind === 'event' && e.name === 'incident');
  const understood = store.understandings(incidents.map((e) => ({ deviceId: e.deviceId, at: incidentTime(e) })));
  const events = rows.map((e) => {
    const view = eventView(e);
    if (e.kind !== 'event' || e.name !== 'incident') return view;
    return { ...view, understanding: understood.get(understandingKey(e.deviceId, incidentTime(e))) ?? null };
  });
  return { target: q.target, kind: q.kind, events, sources: sourcesOf(devices, from, to) };
}

/** An incident's own time as the media plugin dates its understanding: its timestamp, else when the hub received it. */
function incidentTime(e: HistoryEvent): number {
  const stamped = typeof e.body.timestamp === 'string' ? Date.parse(e.body.timestamp) : NaN;
  return Number.isFinite(stamped) ? stamped : e.at;
}

/** Buckets of one device over [from, to) for GET /fleet/history. */
export function bucketsAnswer(deviceId: string, q: { from?: number; to?: number; bucket?: number }, deps: HistoryRouteDeps) {
  const { from, to } = span(q, deps);
  const bucketMs = (q.bucket ?? 60) * 1000;
  deps.flush();
  return {
    from,
    to,
    bucket_s: bucketMs / 1000,
    buckets: bucketsOf(deps.store().minutes([deviceId], from, to), from, bucketMs),
    sources: sourcesOf([deviceId], from, to),
  };
}

function eventView(e: HistoryEvent) {
  return { device_id: e.deviceId, at: new Date(e.at).toISOString(), name: e.name, track_id: e.trackId, body: e.body };
}

export { PeopleQuery, LastSeenQuery, EventsQuery };
