/**
 * What `GET /fleet/events` sends, one SSE event name each:
 * - `device`: a device's card (presence, thermal state, rates, person count, storage health), at most once a second per device
 * - `presence`: a device went online, offline or stale
 * - `thermal`: its thermal state changed
 * - `incident`: an incident, anomaly or alert event of a device
 * - `ring`: a debug ring event (all kinds but the per-message `ingest`)
 * - `sample`: a new point of the device's history (the plots)
 * - `dets`: its latest detections (only when asked for: about 5 a second per device)
 */
export const FLEET_EVENT_KINDS = ['device', 'presence', 'thermal', 'incident', 'ring', 'sample', 'dets'] as const;
export type FleetEventKind = (typeof FLEET_EVENT_KINDS)[number];

/** Sent when a client names no kinds: everything but the detector-rate `dets`. */
export const DEFAULT_KINDS: readonly FleetEventKind[] = FLEET_EVENT_KINDS.filter((k) => k !== 'dets');

export interface FleetEvent {
  kind: FleetEventKind;
  /** The device it is about; null for hub-wide ring events. */
  deviceId: string | null;
  data: unknown;
}
