/**
 * The device timeline's data, from what the hub serves: history samples (counts, rates, thermal),
 * incidents (the debug ring's ingested event topics and the live `incident` events) and recorded
 * chunks. Pure functions: spans and marks in epoch ms.
 */

export interface TimelineSample {
  t: number;
  person_count: number | null;
  camera_fps?: number | null;
  detection_fps?: number | null;
  /** Per class counts, where the history carries them (a newer store); else only persons are known. */
  counts?: Record<string, number | null> | null;
  class_counts?: Record<string, number | null> | null;
  thermal_state?: string | null;
}

export interface Incident {
  at: number;
  type: string;
  text: string;
}

export interface Chunk {
  device_id: string;
  name: string;
  started_at?: string;
  /**
   * Wall time of its end (the last picture's capture plus a frame). A device that drops pictures
   * before its encoder (loaded, throttled) writes a chunk spanning more wall time than its media:
   * 20 pictures at 5 fps are 4 s of video over 9 s of the day.
   */
  ended_at?: string;
  /** Media duration: its pictures at the encoder's rate. */
  duration_s?: number;
  justified?: boolean;
  playUrl: string;
}

export interface Span {
  from: number;
  to: number;
}

const INCIDENT_TOPIC = /\/events\/(.*(incident|anomaly|alert).*)$/i;

/** The counts per class of a sample: its per-class block where there is one, else its person count. */
export function countsOf(s: TimelineSample): Record<string, number> {
  const block = s.counts ?? s.class_counts;
  const out: Record<string, number> = {};
  if (block && typeof block === 'object') {
    for (const [k, v] of Object.entries(block)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  }
  if (out.person === undefined && typeof s.person_count === 'number') out.person = s.person_count;
  return out;
}

/**
 * Online spans: runs of samples no further apart than `gapMs` (the history has a sample per step
 * while the device reports; a hole is time it did not).
 */
export function onlineSpans(samples: readonly TimelineSample[], gapMs: number): Span[] {
  const spans: Span[] = [];
  for (const s of samples) {
    const last = spans.at(-1);
    if (last && s.t - last.to <= gapMs) last.to = s.t;
    else spans.push({ from: s.t, to: s.t });
  }
  return spans;
}

/** A thermal state that suspends or slows the detector (spec: THERMAL_WARN, THERMAL_CRITICAL). */
export function isThermalSuspension(state: string | null | undefined): boolean {
  return typeof state === 'string' && state !== 'NORMAL' && /THERMAL|CRITICAL|SUSPEND|THROTTL/i.test(state);
}

/** Thermal suspensions from samples that carry a thermal state, merged with live changes (`changes`: at → state). */
export function thermalSpans(samples: readonly TimelineSample[], changes: readonly { at: number; to: string | null }[], now: number): Span[] {
  const points = [
    ...samples.filter((s) => s.thermal_state !== undefined).map((s) => ({ at: s.t, hot: isThermalSuspension(s.thermal_state) })),
    ...changes.map((c) => ({ at: c.at, hot: isThermalSuspension(c.to) })),
  ].sort((a, b) => a.at - b.at);
  const spans: Span[] = [];
  let open: number | null = null;
  for (const p of points) {
    if (p.hot && open === null) open = p.at;
    else if (!p.hot && open !== null) {
      spans.push({ from: open, to: p.at });
      open = null;
    }
  }
  if (open !== null) spans.push({ from: open, to: now });
  return spans;
}

/** An incident from a debug ring `ingest` event (topic and time only), or null for another topic. */
export function incidentOfRing(e: { topic?: string; timestamp: string }): Incident | null {
  const m = e.topic ? INCIDENT_TOPIC.exec(e.topic) : null;
  const at = Date.parse(e.timestamp);
  return m && Number.isFinite(at) ? { at, type: m[1], text: '' } : null;
}

/** An incident from a live `incident` event: at the device's own timestamp, else when the hub had it. */
export function incidentOfEvent(d: { topic?: string; received_at?: string; message?: Record<string, unknown> }): Incident | null {
  const msg = d.message ?? {};
  const stamped = typeof msg.timestamp === 'string' ? Date.parse(msg.timestamp) : NaN;
  const at = Number.isFinite(stamped) ? stamped : Date.parse(d.received_at ?? '');
  if (!Number.isFinite(at)) return null;
  const type = typeof msg.type === 'string' ? msg.type : (d.topic?.split('/').pop() ?? 'incident');
  return { at, type, text: typeof msg.message === 'string' ? msg.message : '' };
}

/**
 * Incidents merged, one per moment: a live event and the ring's record of the same message are one
 * (the ring's time is the hub's, a little after the device's): the one with text wins.
 */
export function mergeIncidents(a: readonly Incident[], b: readonly Incident[], withinMs = 2000): Incident[] {
  const all = [...a, ...b].sort((x, y) => x.at - y.at);
  const out: Incident[] = [];
  for (const i of all) {
    const twin = out.find((o) => o.type === i.type && Math.abs(o.at - i.at) <= withinMs && (o.text === '' || i.text === ''));
    if (!twin) out.push({ ...i });
    else if (twin.text === '' && i.text !== '') Object.assign(twin, { text: i.text, at: i.at });
  }
  return out;
}

/** The wall time a chunk covers: to its ended_at, else (a chunk listed without it) its start plus its media duration. */
export function chunkSpan(c: Chunk): Span | null {
  const from = Date.parse(c.started_at ?? '');
  if (!Number.isFinite(from)) return null;
  const ended = Date.parse(c.ended_at ?? '');
  if (Number.isFinite(ended) && ended > from) return { from, to: ended };
  if (typeof c.duration_s !== 'number') return null;
  return { from, to: from + c.duration_s * 1000 };
}

/**
 * Seconds into the chunk's video of the wall moment `at`: the moment's share of the chunk's wall span,
 * of its media duration (a raw stream keeps no capture times, and pictures dropped before the encoder
 * shorten the media, not the span).
 */
export function mediaOffsetS(c: Chunk, span: Span, at: number): number {
  const wallS = Math.max(0, at - span.from) / 1000;
  const spanS = (span.to - span.from) / 1000;
  if (typeof c.duration_s !== 'number' || !(c.duration_s > 0) || !(spanS > 0)) return wallS;
  return Math.min(c.duration_s, (wallS / spanS) * c.duration_s);
}

/**
 * The recorded chunk holding the moment `at`, with the offset into its video in seconds; null while none does.
 * Chunks do not quite tile time (a chunk ends a frame after its last picture, the next starts at its first):
 * a moment in such a hole (up to `holeMs`) plays from the start of the chunk after it.
 */
export function chunkAt(chunks: readonly Chunk[], at: number, holeMs = 1500): { chunk: Chunk; offsetS: number } | null {
  let next: { chunk: Chunk; from: number } | null = null;
  for (const c of chunks) {
    const span = chunkSpan(c);
    if (!span) continue;
    if (at >= span.from && at < span.to) return { chunk: c, offsetS: mediaOffsetS(c, span, at) };
    if (span.from > at && span.from - at <= holeMs && (!next || span.from < next.from)) next = { chunk: c, from: span.from };
  }
  return next ? { chunk: next.chunk, offsetS: 0 } : null;
}

/** Samples bucketed to at most `buckets` points over [from, to] (each bucket's most of each class), for a strip a few hundred pixels wide. */
export function bucketCounts(samples: readonly TimelineSample[], from: number, to: number, buckets: number): { t: number; counts: Record<string, number> }[] {
  const width = Math.max(1, (to - from) / buckets);
  const out = new Map<number, Record<string, number>>();
  for (const s of samples) {
    if (s.t < from || s.t > to) continue;
    const b = Math.min(buckets - 1, Math.floor((s.t - from) / width));
    const acc = out.get(b) ?? {};
    for (const [k, v] of Object.entries(countsOf(s))) acc[k] = Math.max(acc[k] ?? 0, v);
    out.set(b, acc);
  }
  return [...out.entries()].sort((x, y) => x[0] - y[0]).map(([b, counts]) => ({ t: from + (b + 0.5) * width, counts }));
}
