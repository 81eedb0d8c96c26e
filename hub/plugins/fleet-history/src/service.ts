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
