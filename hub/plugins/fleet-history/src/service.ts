import { serviceToken } from 'lookout/core';

/** One point of a device's history: the last reading of its step (person_count: the most seen in it). */
export interface HistorySample {
  /** Epoch ms of the step's newest reading. */
  t: number;
  die_temp_c: number | null;
  camera_fps: number | null;
  /** Detection rate (frames through the detector per second). */
  detection_fps: number | null;
  person_count: number | null;
}

/** A bounded per-device history of telemetry, for plots over the last hour (the console's). */
export interface FleetHistory {
  /** The device's samples, oldest first, newer than `sinceMs` when given; undefined for a device it holds nothing of. */
  samples(deviceId: string, sinceMs?: number): HistorySample[] | undefined;
  /** Devices it holds samples of. */
  deviceIds(): string[];
  /** Called with each new or updated sample (the SSE plugin forwards them). Returns the removal. */
  onSample(listener: (deviceId: string, sample: HistorySample) => void): () => void;
  readonly windowMs: number;
  readonly stepMs: number;
}

export const FLEET_HISTORY = serviceToken<FleetHistory>('fleet-history');

/** One device's minute as the history store keeps it: the devices' own counts, never inferred. */
export interface MinuteRow {
  deviceId: string;
  /** Epoch ms of the minute's start. */
  minute: number;
  /** dets messages in the minute. */
  frames: number;
  /** The person gate's count (dets `person_count`): the most in one message, and the sum (mean = sum / frames). */
  personMax: number;
  personSum: number;
  /** Per class id: the most in one message, the sum over its messages, and the track ids seen (bounded). */
  classes: Record<string, { max: number; sum: number; tracks: number[] }>;
  thermalState: string | null;
  /** Detection was suspended at some point of the minute. */
  suspended: boolean;
  storageHealth: string | null;
  /** When a class was last seen in the minute, per class id (epoch ms). */
  lastSeen: Record<string, number>;
}

/**
 * A thing that happened at one instant: an incident (events/<type>), an OCR read, a chunk, a
 * presence change; the hub's understanding of an incident (`at` is the incident's own time, so it
 * is found by device and that time); an audit of what an agent, a remediation or a provisioning did.
 */
export interface HistoryEvent {
  deviceId: string;
  at: number;
  kind: 'event' | 'ocr' | 'chunk' | 'presence' | 'understanding' | 'audit';
  /** The event's type (its topic suffix after events/), the chunk's name, `online`/`offline`; an audit's source (svc_agent, remediation, provision). */
  name: string;
  trackId: number | null;
  body: Record<string, unknown>;
}

export interface PeopleTotals {
  frames: number;
  personMax: number;
  personSum: number;
  /** Distinct (device, person track id) pairs. */
  uniqueTracks: number;
  /** Distinct minutes with data. */
  minutes: number;
  devices: string[];
}

export interface HistoryUsage {
  bytes: number;
  minutes: number;
  events: number;
  oldest: number | null;
}

/**
 * The fleet history's backing (issue 29 item 1): SQLite through better-sqlite3 in one hub; the same
 * calls over a shared database when replicas share it (docs/fleet-history.md says how). Writes come
 * batched: one `write` per flush, in one transaction.
 */
export interface HistoryStore {
  /** Merges minutes (a minute already stored adds up with this one) and appends events. */
  write(minutes: readonly MinuteRow[], events: readonly HistoryEvent[]): void;
  /** Minutes of the devices in [from, to), oldest first. */
  minutes(deviceIds: readonly string[], from: number, to: number): MinuteRow[];
  /** The person counts of the devices over [from, to), added up where the data is (a day of 100 devices is 144 000 minutes). */
  people(deviceIds: readonly string[], from: number, to: number): PeopleTotals;
  /** Events of the devices in [from, to), newest first, at most `limit`. */
  events(deviceIds: readonly string[], kind: HistoryEvent['kind'], from: number, to: number, limit: number): HistoryEvent[];
  /** The stored understanding of each incident given by device and incident time (epoch ms), keyed `<device>\u0000<ms>`. */
  understandings(incidents: readonly { deviceId: string; at: number }[]): Map<string, Record<string, unknown>>;
  /** The newest minute in which the class was seen, by any of the devices (all devices when empty). */
  lastSeen(deviceIds: readonly string[], classId: number): { deviceId: string; at: number } | undefined;
  /** Devices the store holds anything of. */
  deviceIds(): string[];
  /** Drops what is older than `before`, then the oldest days until the store is under `maxBytes`. Answers rows dropped. */
  trim(before: number, maxBytes: number): number;
  usage(): HistoryUsage;
  close(): void;
}
