import { PRODUCTION_NAMED_LABELS } from 'lookout/core/contracts';
import type { HistoryStore, MinuteRow } from './service.js';

/** A class named as the production map names it, or its id as a string. */
export function className(id: number | string): string {
  return PRODUCTION_NAMED_LABELS[Number(id)] ?? String(id);
}

/** A class given by name (`person`) or id (`0`); undefined when it names none. */
export function classIdOf(name: string): number | undefined {
  const i = (PRODUCTION_NAMED_LABELS as readonly string[]).indexOf(name);
  if (i >= 0) return i;
  return /^\d{1,3}$/.test(name) ? Number(name) : undefined;
}

export interface ClassCounts {
  /** The most in one dets message. */
  max: number;
  /** Per dets message of the span (messages without the class count 0). */
  mean: number;
  /** Distinct track ids (0 without the tracker layer). */
  unique_tracks: number;
}

export interface Bucket {
  t: number;
  frames: number;
  person_max: number;
  person_mean: number | null;
  classes: Record<string, ClassCounts>;
  thermal_state: string | null;
  suspended: boolean;
  storage_health: string | null;
}

/** Minutes folded into buckets of `bucketMs` from `from`: counts add up, track ids union. */
export function bucketsOf(rows: readonly MinuteRow[], from: number, bucketMs: number): Bucket[] {
  const groups = new Map<number, MinuteRow[]>();
  for (const r of rows) {
    const t = from + Math.floor((r.minute - from) / bucketMs) * bucketMs;
    let g = groups.get(t);
    if (!g) groups.set(t, (g = []));
    g.push(r);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([t, g]) => ({ t, ...summary(g) }));
}

/** One span's counts over minutes (of one or several devices). */
export function summary(rows: readonly MinuteRow[]): Omit<Bucket, 't'> {
  let frames = 0;
  let personMax = 0;
  let personSum = 0;
  let suspended = false;
  let thermal: string | null = null;
  let storage: string | null = null;
  const classes = new Map<string, { max: number; sum: number; tracks: Set<string> }>();
  for (const r of rows) {
    frames += r.frames;
    personMax = Math.max(personMax, r.personMax);
    personSum += r.personSum;
    suspended ||= r.suspended;
    thermal = r.thermalState ?? thermal;
    storage = r.storageHealth ?? storage;
    for (const [c, v] of Object.entries(r.classes)) {
      const name = className(c);
      let acc = classes.get(name);
      if (!acc) classes.set(name, (acc = { max: 0, sum: 0, tracks: new Set() }));
      acc.max = Math.max(acc.max, v.max);
      acc.sum += v.sum;
      // A track id is a device's own: the same number on two devices is two tracks.
      for (const id of v.tracks) acc.tracks.add(`${r.deviceId}\u0000${id}`);
    }
  }
  const out: Record<string, ClassCounts> = {};
  for (const [name, acc] of classes) out[name] = { max: acc.max, mean: frames > 0 ? round(acc.sum / frames) : 0, unique_tracks: acc.tracks.size };
  return {
    frames,
    person_max: personMax,
    person_mean: frames > 0 ? round(personSum / frames) : null,
    classes: out,
    thermal_state: thermal,
    suspended,
    storage_health: storage,
  };
}

/** People (the person gate's counts, person tracks) at the devices over [from, to). */
export function peopleSeen(store: HistoryStore, deviceIds: readonly string[], from: number, to: number) {
  const p = store.people(deviceIds, from, to);
  return {
    person_max: p.personMax,
    person_mean: p.frames > 0 ? round(p.personSum / p.frames) : null,
    unique_person_tracks: p.uniqueTracks,
    frames: p.frames,
    minutes: p.minutes,
    devices_with_data: p.devices,
  };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
