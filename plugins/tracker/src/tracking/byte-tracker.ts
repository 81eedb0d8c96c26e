import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import { boxOfDetection, type Box } from '../geometry/box.js';
import { associateByIou, type Candidate } from './associate.js';
import { Track, type TrackState } from './track.js';
import { parseByteTrackerOptions, type ByteTrackerOptions, type ByteTrackerOptionsInput } from './tracker-options.js';

export interface TrackSnapshot {
  id: number;
  classId: number;
  state: TrackState;
  box: Box;
  velocity: [number, number];
  hits: number;
  missed: number;
  score: number;
}

export interface UpdateOptions {
  /** Frames elapsed since the previous update (1 normally; more when the detector stride dropped). */
  dt?: number;
}

/** Anything that turns one frame's detections into the same detections with `track_id`. */
export interface MultiObjectTracker {
  update(dets: readonly Detection[], options?: UpdateOptions): Detection[];
  reset(): void;
}

/**
 * ByteTrack-style multi-object tracker.
 *
 * Per frame: predict every track (constant-velocity Kalman); match high-confidence detections to
 * confirmed and lost tracks; match low-confidence detections to the confirmed tracks still unmatched
 * (a partly occluded person's weak detection keeps its track alive instead of being discarded);
 * match tentative tracks to the remaining high detections; start tentative tracks from the rest.
 *
 * Ids: only confirmed tracks carry one. A detection gets `track_id` when it is matched to a
 * confirmed track, or when its hit confirms a tentative track (minHits). Detections of tentative
 * tracks, unmatched low-confidence detections and ones below lowThreshold pass through without
 * `track_id`: publishing ids of one-frame false positives would make ids meaningless downstream, and
 * ids are handed out at confirmation so they stay small and consecutive.
 */
export class ByteTracker implements MultiObjectTracker {
  readonly options: ByteTrackerOptions;
  private tracks: Track[] = [];
  private nextId = 1;
  private frames = 0;

  constructor(options: ByteTrackerOptionsInput = {}) {
    this.options = parseByteTrackerOptions(options);
  }

  update(dets: readonly Detection[], options: UpdateOptions = {}): Detection[] {
    const dt = options.dt ?? 1;
    if (!Number.isFinite(dt) || dt <= 0) throw new LookoutError('argument_invalid', `dt must be a positive number of frames, got ${dt}`);
    // Validate everything before touching state: a bad frame changes nothing.
    const boxes = dets.map((d, i) => boxOfDetection(d, i));
    const o = this.options;
    this.frames += 1;

    // A gap longer than the lost buffer (the detector was suspended, frames were dropped) ends every
    // track it outlasts before anything is predicted across it.
    this.tracks = this.tracks.filter((t) => t.missed + dt - 1 <= o.lostBufferFrames);
    for (const t of this.tracks) t.predict(dt);
    const assigned = new Array<number>(dets.length).fill(0);
    const matchedTracks = new Set<Track>();
    const cand = (i: number): Candidate => ({ box: padToMinSize(boxes[i], o.minMatchSize), classId: dets[i].c });
    const trackCand = (t: Track): Candidate => ({ box: padToMinSize(t.box(), o.minMatchSize), classId: t.classId });

    const high: number[] = [];
    const low: number[] = [];
    dets.forEach((d, i) => {
      if (d.p >= o.highThreshold) high.push(i);
      else if (d.p >= o.lowThreshold) low.push(i);
    });

    // 1. High detections against confirmed and lost tracks.
    const pool = this.tracks.filter((t) => t.state === 'confirmed' || t.state === 'lost');
    const first = associateByIou(
      pool.map((t) => ({ ...trackCand(t), penalty: t.state === 'lost' ? o.lostPenalty : 0 })),
      high.map(cand),
      o.firstMatchIou,
      o.classAware,
    );
    for (const [ti, di] of first.matches) {
      const t = pool[ti];
      const d = high[di];
      t.hit(boxes[d], dets[d].p);
      t.state = 'confirmed';
      matchedTracks.add(t);
      assigned[d] = t.id;
    }

    // 2. Low detections against confirmed tracks left over (not lost ones: a weak box far from where
    //    a lost track was is more likely clutter than the object coming back).
    const leftover = first.unmatchedTracks.map((i) => pool[i]).filter((t) => t.state === 'confirmed');
    const second = associateByIou(leftover.map(trackCand), low.map(cand), o.secondMatchIou, o.classAware);
    for (const [ti, di] of second.matches) {
      const t = leftover[ti];
      const d = low[di];
      t.hit(boxes[d], dets[d].p);
      matchedTracks.add(t);
      assigned[d] = t.id;
    }

    // 3. Tentative tracks against the high detections nobody took.
    const remainingHigh = first.unmatchedDets.map((i) => high[i]);
    const tentative = this.tracks.filter((t) => t.state === 'tentative');
    const third = associateByIou(tentative.map(trackCand), remainingHigh.map(cand), o.tentativeMatchIou, o.classAware);
    for (const [ti, di] of third.matches) {
      const t = tentative[ti];
      const d = remainingHigh[di];
      t.hit(boxes[d], dets[d].p);
      matchedTracks.add(t);
      if (t.hits >= o.minHits) this.confirm(t);
      if (t.id) assigned[d] = t.id;
    }

    // Unmatched tracks: tentative ones die at once, confirmed ones become lost, lost ones age out.
    for (const t of this.tracks) {
      if (matchedTracks.has(t)) continue;
      t.missed += dt;
      if (t.state === 'tentative') t.state = 'removed';
      else if (t.state === 'confirmed') t.state = 'lost';
      if (t.state === 'lost' && t.missed > o.lostBufferFrames) t.state = 'removed';
    }

    // 4. Births.
    for (const di of third.unmatchedDets) {
      const d = remainingHigh[di];
      if (dets[d].p < o.birthThreshold) continue;
      const t = new Track(dets[d].c, boxes[d], dets[d].p, { position: o.positionNoise, velocity: o.velocityNoise });
      if (o.minHits <= 1) {
        this.confirm(t);
        assigned[d] = t.id;
      }
      this.tracks.push(t);
    }

    this.tracks = this.tracks.filter((t) => t.state !== 'removed');
    return dets.map((d, i) => withTrackId(d, assigned[i]));
  }

  reset(): void {
    this.tracks = [];
    this.nextId = 1;
    this.frames = 0;
  }

  /** Live tracks (tentative, confirmed and lost), for debugging and tests. */
  snapshot(): TrackSnapshot[] {
    return this.tracks.map((t) => ({
      id: t.id,
      classId: t.classId,
      state: t.state,
      box: t.box(),
      velocity: t.kf.velocity(),
      hits: t.hits,
      missed: t.missed,
      score: t.score,
    }));
  }

  get frameCount(): number {
    return this.frames;
  }

  private confirm(t: Track): void {
    t.state = 'confirmed';
    t.id = this.nextId++;
  }
}

/**
 * A box grown about its centre to at least `min` pixels each way, for matching only: a few pixels of
 * detector jitter on a 5-pixel-tall knife drive its IoU with its own previous box to near zero.
 */
export function padToMinSize(b: Box, min: number): Box {
  const w = b[2] - b[0];
  const h = b[3] - b[1];
  if (w >= min && h >= min) return b;
  const cx = (b[0] + b[2]) / 2;
  const cy = (b[1] + b[3]) / 2;
  const hw = Math.max(w, min) / 2;
  const hh = Math.max(h, min) / 2;
  return [cx - hw, cy - hh, cx + hw, cy + hh];
}

/** A copy of the detection with `track_id` set (id > 0) or removed (0). */
export function withTrackId(d: Detection, id: number): Detection {
  const { track_id: _drop, ...rest } = d;
  return id > 0 ? { ...rest, track_id: id } : rest;
}
