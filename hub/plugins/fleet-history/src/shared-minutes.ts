import type { DividedApply } from 'lookout/hub';
import type { MinuteRow } from './service.js';
import { MAX_TRACKS_PER_MINUTE } from './sqlite-history-store.js';

/** The channel the owners' minute rows go to the other replicas on. */
export const MINUTES_CHANNEL = 'fleet-history/minutes';
/** Rows per record: a large fleet's flush goes in several, each read (parsed, checked) in a few milliseconds. */
export const ROWS_PER_RECORD = 1000;
/** A device id as long as a topic lets it be. */
const MAX_ID = 512;

/**
 * What a replica that divides the apply folded from dets (only those of the devices it owned when
 * they came: `frames > 0`), for the others: the dets part of each row (frames, persons, classes,
 * last seen). The status and health part every replica derives itself (those messages are applied
 * everywhere), so a row taken from another replica never sets a minute's thermal state back.
 */
export function shareMinutes(divided: Pick<DividedApply, 'publish'>, rows: readonly MinuteRow[]): void {
  const minutes = rows
    .filter((r) => r.frames > 0)
    .map(({ deviceId, minute, frames, personMax, personSum, classes, lastSeen }) => ({ deviceId, minute, frames, personMax, personSum, classes, lastSeen }));
  for (let i = 0; i < minutes.length; i += ROWS_PER_RECORD) divided.publish(MINUTES_CHANNEL, { minutes: minutes.slice(i, i + ROWS_PER_RECORD) });
}

/**
 * The rows of a record another replica shared, to merge into the store, and how many were not rows
 * (each skipped alone). Checked by hand, not by a schema: a record is read in the ingest's read
 * loop, and a thousand rows must cost it a millisecond, not tens.
 */
export function sharedMinutesOf(value: unknown): { rows: MinuteRow[]; skipped: number } {
  const minutes = isRecord(value) && Array.isArray(value.minutes) ? value.minutes : undefined;
  if (!minutes) return { rows: [], skipped: 1 };
  const rows: MinuteRow[] = [];
  for (const r of minutes.slice(0, ROWS_PER_RECORD)) {
    if (isSharedRow(r))
      rows.push({
        deviceId: r.deviceId,
        minute: r.minute,
        frames: r.frames,
        personMax: r.personMax,
        personSum: r.personSum,
        classes: r.classes,
        lastSeen: r.lastSeen,
        thermalState: null,
        suspended: false,
        storageHealth: null,
      });
  }
  return { rows, skipped: minutes.length - rows.length };
}

type SharedRow = Pick<MinuteRow, 'deviceId' | 'minute' | 'frames' | 'personMax' | 'personSum' | 'classes' | 'lastSeen'>;

function isSharedRow(r: unknown): r is SharedRow {
  if (!isRecord(r)) return false;
  if (typeof r.deviceId !== 'string' || r.deviceId.length === 0 || r.deviceId.length > MAX_ID) return false;
  if (!isCount(r.minute) || !Number.isInteger(r.minute) || !isCount(r.frames) || !isCount(r.personMax) || !isCount(r.personSum)) return false;
  if (!isRecord(r.classes) || !isRecord(r.lastSeen)) return false;
  for (const c of Object.values(r.classes)) {
    if (!isRecord(c) || !isCount(c.max) || !isCount(c.sum) || !Array.isArray(c.tracks) || c.tracks.length > MAX_TRACKS_PER_MINUTE) return false;
    for (const t of c.tracks) if (!Number.isInteger(t)) return false;
  }
  for (const at of Object.values(r.lastSeen)) if (!isCount(at)) return false;
  return true;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
