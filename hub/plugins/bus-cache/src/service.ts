import { serviceToken } from 'lookout/core';
import { type BusSuffix } from 'lookout/core/contracts';

/** A message that passed its wire contract. */
export interface IngestedMessage {
  topic: string;
  deviceId: string;
  /** The topic's own suffix, e.g. `events/incident`. */
  suffix: string;
  /** The contract that applied, e.g. `events/+`. */
  key: BusSuffix;
  message: Record<string, unknown>;
  receivedAt: number;
  retain: boolean;
  /**
   * On a hub replica that divides the apply: a dets or telemetry of a device another replica owns,
   * one of the few applied here. What is derived from each of those its owner derives and shares
   * (HubInfo.dividedApply); a listener that counts them skips these.
   */
  foreign?: boolean;
}

export const INVALID_REASONS = ['oversized', 'empty', 'not_json', 'too_deep', 'schema', 'unknown_topic'] as const;
export type InvalidReason = (typeof INVALID_REASONS)[number];

export interface TopicStats {
  count: number;
  lastAt: number;
}

export interface InvalidStats {
  count: number;
  lastReason: InvalidReason;
  lastAt: number;
  lastIssue?: string;
}

/** What the cache holds of one device that sent at least one valid message. */
export interface DeviceSnapshot {
  deviceId: string;
  latest: ReadonlyMap<string, { message: Record<string, unknown>; receivedAt: number; retain: boolean; count: number }>;
  invalid: ReadonlyMap<string, InvalidStats>;
  recentChunks: readonly Record<string, unknown>[];
  anomalyAlerts: readonly Record<string, unknown>[];
  /** When its newest valid message was sent (received time, or a retained message's own timestamp). */
  newestAt: number;
}

export interface IngestStatus {
  connected: boolean;
  messages: number;
  valid: number;
  invalid: number;
  lastMessageAt: number | null;
  ratePerSec: number;
  invalidByTopic: Record<string, number>;
  invalidByReason: Record<string, number>;
  devices: number;
  /** Invalid messages of devices the cache does not track (over max devices, never valid). */
  untrackedInvalid: number;
  /** Valid messages dropped because the cache holds max devices already. */
  refusedDevices: number;
}

/** A device as `GET /fleet/mqtt/latest` shows it. */
export interface EntryView {
  device_id: string;
  status: Record<string, unknown> | null;
  payload: Record<string, unknown> | null;
  dets: unknown[];
  /** null while detection is suspended (not an empty scene), or before the first dets. */
  person_count: number | null;
  /** What the device last said of its detector (telemetry, or its status): suspended is never a frozen count. */
  detection: 'running' | 'suspended' | 'off' | null;
  /** When the current suspension began; null unless suspended. */
  suspended_since: string | null;
  health: Record<string, unknown> | null;
  recent_chunks: readonly Record<string, unknown>[];
  anomaly_alerts: readonly Record<string, unknown>[];
  stale_sec: number;
  age_s: number;
  stale: boolean;
  online: boolean;
  last_message_at: string | null;
  /** When the hub learned the device went offline (its last-will or offline status arrived); null while online. */
  offline_since: string | null;
  /** When the device itself was last heard (its newest message but a last-will, which the broker sends). */
  last_seen_at: string | null;
  topics: Record<string, { received_at: string; count: number; retained: boolean }>;
  invalid: Record<string, { count: number; last_reason: string; last_at: string; last_issue?: string }>;
}

/** The hub's per-device, per-topic cache of the bus, and the one ingest other hub plugins listen to. */
export interface BusCache {
  readonly staleSec: number;
  /** Valid messages as they arrive; `key` limits to one contract. */
  on(key: BusSuffix | '*', listener: (m: IngestedMessage) => void): () => void;
  device(deviceId: string): DeviceSnapshot | undefined;
  /**
   * The device as applied so far: on a hub replica that divides the apply, without applying the dets
   * and telemetry it holds back of a device another replica owns (at most the interval old). For
   * sweeps over the whole fleet (staleness), which a read of every device each time would undo.
   */
  deviceAsApplied(deviceId: string): DeviceSnapshot | undefined;
  /** The device as `/fleet/mqtt/latest` shows it (online, stale, person_count…), at `now`. */
  view(deviceId: string, now?: number): EntryView | undefined;
  /** Its latest status says online and it is not stale (what a replica holds back changes neither). */
  isOnline(deviceId: string, now?: number): boolean;
  /** The view's person_count without the rest of the view (asked per message): null while detection is suspended. */
  personCount(deviceId: string): number | null;
  deviceIds(): string[];
  ingestStatus(): IngestStatus;
  /**
   * Adds the hub's own fields to the anomaly_alerts entry an events message made (found by its
   * topic and the `receivedAt` of its IngestedMessage), e.g. the media plugin's video
   * understanding of an incident. False when the entry is gone (pushed out by newer alerts).
   */
  annotateAlert(deviceId: string, topic: string, receivedAt: number, fields: Record<string, unknown>): boolean;
}

export const BUS_CACHE = serviceToken<BusCache>('bus-cache');
