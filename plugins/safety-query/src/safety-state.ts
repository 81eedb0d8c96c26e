import { PRODUCTION_NAMED_LABELS, type Detection } from 'lookout/core/contracts';
import { countGatedPersons } from '../../detector/src/service.js';

/** gun, knife, rifle, shotgun in the production class map (spec 02). */
const WEAPON_IDS = new Set([10, 11, 12, 13]);

/** The detector's latest frame as this plugin heard it (null before the first). */
export interface LatestFrame {
  timestamp: string;
  dets: readonly Detection[];
}

export interface StateInputs {
  deviceId: string;
  latest: LatestFrame | null;
  /** 'off' when no detector runs on this device (layer 0, or it failed). */
  detection: 'running' | 'suspended' | 'off';
  suspendedSince: string | null;
  thermalState: string | null;
  thermalReason: string | null;
  dieTempC: number | null;
  weaponGate: number;
  /** The recorder's status; null without a recorder (recordingReason says why). */
  recording: RecordingFigures | null;
  recordingReason: string | null;
}

export interface RecordingFigures {
  is_writing_data: boolean;
  storage_health: string;
  total_chunks: number;
  latest_chunk_started_at: string | null;
}

/** The device's own figures: every number an answer may state comes from here. */
export interface SafetyState {
  device_id: string;
  dets_timestamp: string | null;
  detection: 'running' | 'suspended' | 'off';
  suspended_since: string | null;
  person_count: number;
  counts: { class_id: number; label: string | null; count: number }[];
  track_ids: number[];
  track_count: number;
  weapons: { detected: boolean; gate: number; count: number; labels: string[] };
  thermal_state: string | null;
  thermal_state_reason: string | null;
  die_temp_c: number | null;
  recording: RecordingFigures | null;
  recording_reason: string | null;
}

export function safetyState(i: StateInputs): SafetyState {
  const dets = i.latest?.dets ?? [];
  const byClass = new Map<number, number>();
  for (const d of dets) byClass.set(d.c, (byClass.get(d.c) ?? 0) + 1);
  const weapons = dets.filter((d) => WEAPON_IDS.has(d.c) && d.p >= i.weaponGate);
  const trackIds = [...new Set(dets.flatMap((d) => (d.track_id === undefined ? [] : [d.track_id])))].sort((a, b) => a - b);
  return {
    device_id: i.deviceId,
    dets_timestamp: i.latest?.timestamp ?? null,
    detection: i.detection,
    suspended_since: i.suspendedSince,
    // The same gate the detector's dets message and get_latest_dets use: one count on the device.
    person_count: countGatedPersons(dets),
    counts: [...byClass].sort(([a], [b]) => a - b).map(([c, n]) => ({ class_id: c, label: labelOf(c), count: n })),
    track_ids: trackIds,
    track_count: trackIds.length,
    weapons: {
      detected: weapons.length > 0,
      gate: i.weaponGate,
      count: weapons.length,
      labels: [...new Set(weapons.map((d) => labelOf(d.c) ?? String(d.c)))],
    },
    thermal_state: i.thermalState,
    thermal_state_reason: i.thermalReason,
    die_temp_c: i.dieTempC,
    recording: i.recording,
    recording_reason: i.recordingReason,
  };
}

function labelOf(c: number): string | null {
  return PRODUCTION_NAMED_LABELS[c] ?? null;
}

/** The answer from the figures alone: what the device says when no describer phrases it, or one was refused. */
export function plainAnswer(s: SafetyState): string {
  const parts: string[] = [];
  if (s.detection === 'off') parts.push('Detection is not running on this device, so it counts nothing.');
  else {
    if (s.detection === 'suspended')
      parts.push(`Detection is suspended (thermal) since ${s.suspended_since ?? 'an unknown time'}; these are the last frame's figures.`);
    parts.push(`${s.person_count} ${s.person_count === 1 ? 'person' : 'people'} in view, ${s.track_count} tracked.`);
    parts.push(s.weapons.detected ? `Weapon detected: ${s.weapons.labels.join(', ')} (${s.weapons.count}).` : 'No weapon detected.');
  }
  if (s.recording) parts.push(`Recording ${s.recording.is_writing_data ? 'is writing' : 'is not writing'} (storage ${s.recording.storage_health}).`);
  else parts.push(`Recording unknown: ${s.recording_reason ?? 'no recorder'}.`);
  parts.push(s.thermal_state ? `Thermal state ${s.thermal_state}.` : `Thermal state unknown: ${s.thermal_state_reason ?? 'no reading'}.`);
  return parts.join(' ');
}
