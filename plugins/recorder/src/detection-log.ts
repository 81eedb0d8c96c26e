import { PRODUCTION_NAMED_LABELS, type Detection, type DetectionSummary } from 'lookout/core/contracts';

/** One line of a chunk's `.dets.jsonl`: a detector result while the chunk was written. */
export interface DetsLine {
  /** Epoch ms of the frame. */
  t: number;
  dets: { c: number; p: number; track_id?: number }[];
}

export const PERSON_CLASS = 0;
/** gun, knife, rifle, shotgun in the production class map (spec 02): one at or over the weapon gate justifies a chunk. */
export const WEAPON_CLASSES: ReadonlySet<number> = new Set(['gun', 'knife', 'rifle', 'shotgun'].map((l) => PRODUCTION_NAMED_LABELS.indexOf(l as never)));

export function labelOf(c: number): string {
  return PRODUCTION_NAMED_LABELS[c] ?? `class_${c}`;
}

/** Only what the log keeps: class, confidence (3 digits) and the track id the tracker gave. */
export function detsLine(t: number, dets: readonly Detection[]): DetsLine {
  return {
    t,
    dets: dets.map((d) => ({ c: d.c, p: Math.round(d.p * 1000) / 1000, ...(d.track_id !== undefined && d.track_id >= 0 ? { track_id: d.track_id } : {}) })),
  };
}

/** Lines of a `.dets.jsonl`; a line cut by a crash (or otherwise not a result) is skipped. */
export function parseDetsLog(text: string): DetsLine[] {
  const out: DetsLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    try {
      const v = JSON.parse(raw) as Partial<DetsLine>;
      if (typeof v.t === 'number' && Array.isArray(v.dets)) {
        out.push({ t: v.t, dets: v.dets.filter((d) => typeof d?.c === 'number' && typeof d.p === 'number') });
      }
    } catch {
      // a torn last line
    }
  }
  return out;
}

/**
 * What the detector saw: per class the most seen in one result and the best confidence, the track
 * ids, and the person count over the gate (persons below it are the detector's doubt, not a count).
 */
export function summarize(lines: readonly DetsLine[], personGate: number): DetectionSummary {
  const classes: DetectionSummary['classes'] = {};
  const tracks = new Set<number>();
  let framesWithDetections = 0;
  let personMax = 0;
  for (const line of lines) {
    if (line.dets.length > 0) framesWithDetections++;
    const counts = new Map<number, number>();
    let persons = 0;
    for (const d of line.dets) {
      counts.set(d.c, (counts.get(d.c) ?? 0) + 1);
      if (d.c === PERSON_CLASS && d.p >= personGate) persons++;
      if (d.track_id !== undefined) tracks.add(d.track_id);
      const key = String(d.c);
      const entry = (classes[key] ??= { label: labelOf(d.c), max_count: 0, max_confidence: 0 });
      entry.max_confidence = Math.max(entry.max_confidence, d.p);
    }
    for (const [c, n] of counts) classes[String(c)].max_count = Math.max(classes[String(c)].max_count, n);
    personMax = Math.max(personMax, persons);
  }
  return { frames_with_detections: framesWithDetections, person_max_count: personMax, classes, track_ids: [...tracks].sort((a, b) => a - b) };
}

/** The confidences at or over which a detection justifies a chunk (JUSTIFY_PERSON_CONFIDENCE, JUSTIFY_WEAPON_CONFIDENCE). */
export interface JustifyGates {
  person: number;
  weapon: number;
}

/**
 * Why a chunk is justified (a weapon class or a person at or over its gate), or null when it is not.
 * The reason names both gates, so a sidecar says by which rule it was kept.
 */
export function justification(summary: DetectionSummary, gates: JustifyGates): string | null {
  const rule = `(gates: person >= ${gates.person}, weapon >= ${gates.weapon})`;
  const weapons = Object.entries(summary.classes).filter(([c, s]) => WEAPON_CLASSES.has(Number(c)) && s.max_confidence >= gates.weapon);
  if (weapons.length > 0) {
    return `weapon: ${weapons.map(([, s]) => `${s.label} ${s.max_confidence.toFixed(2)}`).join(', ')} ${rule}`;
  }
  const person = summary.classes[String(PERSON_CLASS)];
  if (person && person.max_confidence >= gates.person) return `person ${person.max_confidence.toFixed(2)} ${rule}`;
  return null;
}
