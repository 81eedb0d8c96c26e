import { serviceToken } from 'lookout/core';

/** Kinds the spec names for the ring ("Debug event ring"). */
export const SPEC_EVENT_KINDS = ['live/warm_ready', 'snapshot_fail', 'ssh_jpeg_fail', 'shadow', 'recorder_status'] as const;
/** Kinds the hub itself records. */
export const HUB_EVENT_KINDS = [
  'ingest',
  'ingest_invalid',
  'tool_call',
  'tool_error',
  'registry',
  'presence',
  'hub',
  'transcode',
  'recording_fail',
  'video_understand',
  'ssh',
  'a2a',
  'transfer',
  'svc_agent',
  'remediation',
  'provision',
] as const;
/** The kinds `GET /debug/events?kind=` takes (an enum in OpenAPI); an event of another kind is kept, not filterable. */
export const EVENT_KINDS = [...SPEC_EVENT_KINDS, ...HUB_EVENT_KINDS] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface DebugEventInput {
  kind: string;
  device_id?: string;
  topic?: string;
  message: string;
  details?: unknown;
}

export interface DebugEvent extends DebugEventInput {
  seq: number;
  /** ISO 8601 UTC. */
  timestamp: string;
  /** Recorded before the hub's last restart and reloaded from its saved state. */
  restored?: boolean;
  /** Events of the same device and kind left out just before this one: a burst past the ring's repeat bound. */
  suppressed_before?: number;
}

export interface DebugEventFilter {
  kinds?: readonly string[];
  device?: string;
  /** Epoch ms: events strictly after. */
  sinceMs?: number;
  limit: number;
}

export interface DebugEventPage {
  events: DebugEvent[];
  /** Capacity of each lane. */
  capacity: number;
  held: number;
  /** Bytes held by the events besides valid ingests (their JSON size), and the bound on them. */
  bytes: number;
  maxBytes: number;
  dropped: number;
  /** Repeated failures of one device and kind left out since start (never stored). */
  suppressed: number;
  /** Events matching the filter before `limit`. */
  matched: number;
}

/** The hub's debug ring (GET /debug/events): ingested messages and the hub's own failures. */
export interface DebugRing {
  /** `atMs`: when it happened, when not now (an ingest event dated by the message's receipt, alike on every hub replica). */
  record(event: DebugEventInput, atMs?: number): void;
  /** A valid ingested message (the hot path: no details, the time given by the caller). */
  ingest(deviceId: string, topic: string, suffix: string, ms: number): void;
  query(filter: DebugEventFilter): DebugEventPage;
  /** Kinds that can be asked for: the spec's and the hub's. */
  kinds(): string[];
  /**
   * Called with each event offered to `record` besides valid ingests, before the ring's own bounds
   * (repeats, bytes) apply: a keeper of audits (the fleet history's database) loses none of them to
   * a burst the ring leaves out or to events pushed out before anyone read them. Not called for
   * events restored after a restart (they were seen before it). Returns the removal.
   */
  onRecord(listener: RecordListener): () => void;
}

/** Sees an event as `record` got it, with its time (epoch ms). A listener's exception is the listener's own. */
export type RecordListener = (event: DebugEventInput, atMs: number) => void;

export const DEBUG_RING = serviceToken<DebugRing>('debug-ring');
