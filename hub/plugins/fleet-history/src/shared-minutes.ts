import { z } from 'zod';
import type { DividedApply } from 'lookout/hub';
import type { MinuteRow } from './service.js';
import { MAX_TRACKS_PER_MINUTE } from './sqlite-history-store.js';

/** The channel the owners' minute rows go to the other replicas on. */
export const MINUTES_CHANNEL = 'fleet-history/minutes';
/** Rows one record carries at most (a flush of a large fleet's owned devices). */
const MAX_SHARED_ROWS = 100_000;

const count = z.number().min(0);
const SharedRow = z.object({
  deviceId: z.string().min(1).max(128),
  minute: z.number().int().min(0),
  frames: count,
  personMax: count,
  personSum: count,
  classes: z.record(z.string().max(16), z.object({ max: count, sum: count, tracks: z.array(z.number().int()).max(MAX_TRACKS_PER_MINUTE) })),
  lastSeen: z.record(z.string().max(16), z.number().int().min(0)),
});
const SharedMinutes = z.object({ minutes: z.array(SharedRow).max(MAX_SHARED_ROWS) });

/**
 * What a replica that divides the apply derived from the dets of the devices it owns, for the
 * others: the dets part of each row (frames, persons, classes, last seen). The status and health
 * part every replica derives itself (those messages are applied everywhere), so a row taken from
 * another replica never sets a minute's thermal state back to an earlier one.
 */
export function shareMinutes(divided: DividedApply, rows: readonly MinuteRow[]): void {
  const minutes = rows
    .filter((r) => r.frames > 0 && divided.owns(r.deviceId))
    .map(({ deviceId, minute, frames, personMax, personSum, classes, lastSeen }) => ({ deviceId, minute, frames, personMax, personSum, classes, lastSeen }));
  for (let i = 0; i < minutes.length; i += MAX_SHARED_ROWS) divided.publish(MINUTES_CHANNEL, { minutes: minutes.slice(i, i + MAX_SHARED_ROWS) });
}

/** Rows another replica shared, as rows to merge into the store; or why the record is not one. */
export function sharedMinutesOf(value: unknown): { rows: MinuteRow[] } | { error: string } {
  const parsed = SharedMinutes.safeParse(value);
  if (!parsed.success) return { error: parsed.error.issues[0]?.message ?? 'not a shared minutes record' };
  return { rows: parsed.data.minutes.map((r) => ({ ...r, thermalState: null, suspended: false, storageHealth: null })) };
}
