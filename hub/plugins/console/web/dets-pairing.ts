import type { ShownPicture } from './capture-clock.js';
import type { Detection } from './store.js';

/** One dets message as the hub streams it (GET /fleet/events?kind=dets). */
export interface DetsFrame {
  timestamp: string;
  dets: Detection[];
  person_count: number;
  /** Capture time of the frame the boxes were found in (devices that say it). */
  captured_at?: string;
  frame_width?: number;
  frame_height?: number;
}

/** How long the page keeps a device's dets to pair a snapshot with: a picture may be seconds old. */
export const RECENT_DETS_MS = 15_000;

/** A snapshot's boxes are those of a frame at most this far from the picture (the hub sends dets 5 times a second). */
export const PAIR_WITHIN_MS = 250;

/**
 * The dets of the picture's instant: the message whose captured_at is nearest the picture's, within
 * PAIR_WITHIN_MS; null while none is (the boxes of another instant would sit beside moving figures).
 * Null too for a picture captured before `streamFrom`, the first dets of the page's stream: the
 * nearest dets may be one sent before the page listened (a snapshot arrives a second or more after
 * its capture; CI drew boxes 179 ms off the picture while the hub had sent some 89 ms off).
 * A device or a snapshot that gives no capture time gets the newest boxes, as before.
 */
export function detsForPicture(recent: readonly DetsFrame[], pictureCapturedAt: string | null, streamFrom?: string): DetsFrame | null {
  const at = pictureCapturedAt ? Date.parse(pictureCapturedAt) : NaN;
  if (Number.isNaN(at) || !recent.some((d) => d.captured_at)) return recent.at(-1) ?? null;
  if (predatesStream(pictureCapturedAt, streamFrom)) return null;
  return nearest(recent, at, PAIR_WITHIN_MS);
}

/** True when the picture was captured before the first dets of the page's stream (both known). */
export function predatesStream(pictureCapturedAt: string | null, streamFrom: string | undefined): boolean {
  const at = pictureCapturedAt ? Date.parse(pictureCapturedAt) : NaN;
  const from = streamFrom ? Date.parse(streamFrom) : NaN;
  return at < from;
}

/**
 * The dets of the live picture on screen (its capture time from the stream's prft boxes): the
 * message captured nearest it, within half the frame interval there, so that a picture never gets
 * its neighbour's boxes; null when none is that near (no boxes rather than boxes of another
 * instant). A stream or a device that gives no capture times gets the newest boxes, as before.
 */
export function detsForLivePicture(recent: readonly DetsFrame[], shown: ShownPicture | undefined): DetsFrame | null {
  if (!shown || !recent.some((d) => d.captured_at)) return recent.at(-1) ?? null;
  if (shown.intervalMs === undefined || !(shown.intervalMs > 0)) return null;
  return nearest(recent, shown.capturedAtMs, shown.intervalMs / 2);
}

function nearest(recent: readonly DetsFrame[], atMs: number, withinMs: number): DetsFrame | null {
  let best: DetsFrame | null = null;
  let gap = Infinity;
  for (const d of recent) {
    const t = d.captured_at ? Date.parse(d.captured_at) : NaN;
    if (Math.abs(t - atMs) < gap) {
      gap = Math.abs(t - atMs);
      best = d;
    }
  }
  return gap <= withinMs ? best : null;
}

/** `recent` with `d` added and what is older than RECENT_DETS_MS (by arrival) let go. */
export function withRecent(recent: readonly (DetsFrame & { received: number })[], d: DetsFrame, now: number): (DetsFrame & { received: number })[] {
  return [...recent.filter((r) => now - r.received <= RECENT_DETS_MS), { ...d, received: now }];
}
