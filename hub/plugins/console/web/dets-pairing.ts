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

/**
 * The frame a message's boxes are in: its frame_width × frame_height, else the 640×640 substream.
 * The same rule as core's detectorFrameOf (contracts/detection-frame.ts); the page is bundled for
 * the browser and cannot import core, and the console's browser test holds the two together.
 */
export function detectorFrameOf(d: Pick<DetsFrame, 'frame_width' | 'frame_height'>): { width: number; height: number } {
  const { frame_width: w, frame_height: h } = d;
  return typeof w === 'number' && typeof h === 'number' && w > 0 && h > 0 ? { width: w, height: h } : { width: 640, height: 640 };
}

/** How long the page keeps a device's dets to pair a snapshot with: a picture may be seconds old. */
export const RECENT_DETS_MS = 15_000;

/** A snapshot's boxes are those of a frame at most this far from the picture (the hub sends dets 5 times a second). */
export const PAIR_WITHIN_MS = 250;

/**
 * The dets of the picture's instant: the message whose captured_at is nearest the picture's, within
 * PAIR_WITHIN_MS; null while none is (the boxes of another instant would sit beside moving figures).
 * A device or a snapshot that gives no capture time gets the newest boxes, as before.
 */
export function detsForPicture(recent: readonly DetsFrame[], pictureCapturedAt: string | null): DetsFrame | null {
  const newest = recent.at(-1) ?? null;
  const at = pictureCapturedAt ? Date.parse(pictureCapturedAt) : NaN;
  if (Number.isNaN(at) || !recent.some((d) => d.captured_at)) return newest;
  let best: DetsFrame | null = null;
  let gap = Infinity;
  for (const d of recent) {
    const t = d.captured_at ? Date.parse(d.captured_at) : NaN;
    if (Math.abs(t - at) < gap) {
      gap = Math.abs(t - at);
      best = d;
    }
  }
  return gap <= PAIR_WITHIN_MS ? best : null;
}

/** `recent` with `d` added and what is older than RECENT_DETS_MS (by arrival) let go. */
export function withRecent(recent: readonly (DetsFrame & { received: number })[], d: DetsFrame, now: number): (DetsFrame & { received: number })[] {
  return [...recent.filter((r) => now - r.received <= RECENT_DETS_MS), { ...d, received: now }];
}
