import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import { boxOfDetection, iou, type Box } from '../geometry/box.js';
import { withTrackId, type MultiObjectTracker, type UpdateOptions } from './byte-tracker.js';

export interface GreedyIouOptions {
  /** Minimum IoU between a track's last box and a detection (default 0.3). */
  minIou?: number;
  /** Detections below this confidence are ignored (default 0.5). */
  minScore?: number;
  /** Frames a track survives unmatched (default 5). */
  maxMissed?: number;
  classAware?: boolean;
}

interface GreedyTrack {
  id: number;
  classId: number;
  box: Box;
  missed: number;
}

/**
 * The baseline of the tracking bench: the classic IoU tracker. No motion model (a track is its last
 * box), greedy matching by descending IoU, an id for every new detection at once.
 */
export class GreedyIouTracker implements MultiObjectTracker {
  private tracks: GreedyTrack[] = [];
  private nextId = 1;
  private readonly minIou: number;
  private readonly minScore: number;
  private readonly maxMissed: number;
  private readonly classAware: boolean;

  constructor(options: GreedyIouOptions = {}) {
    this.minIou = options.minIou ?? 0.3;
    this.minScore = options.minScore ?? 0.5;
    this.maxMissed = options.maxMissed ?? 5;
    this.classAware = options.classAware ?? true;
    for (const [k, v] of Object.entries({ minIou: this.minIou, minScore: this.minScore })) {
      if (!(v >= 0 && v <= 1)) throw new LookoutError('config_invalid', `greedy tracker option ${k} must be in [0, 1], got ${v}`);
    }
    if (!Number.isInteger(this.maxMissed) || this.maxMissed < 0) {
      throw new LookoutError('config_invalid', `greedy tracker option maxMissed must be a non-negative integer, got ${this.maxMissed}`);
    }
  }

  update(dets: readonly Detection[], options: UpdateOptions = {}): Detection[] {
    const dt = options.dt ?? 1;
    const boxes = dets.map((d, i) => boxOfDetection(d, i));
    const pairs: Array<[overlap: number, t: number, d: number]> = [];
    for (let t = 0; t < this.tracks.length; t++) {
      const tr = this.tracks[t];
      for (let d = 0; d < dets.length; d++) {
        if (dets[d].p < this.minScore || (this.classAware && dets[d].c !== tr.classId)) continue;
        const o = iou(tr.box, boxes[d]);
        if (o >= this.minIou) pairs.push([o, t, d]);
      }
    }
    pairs.sort((a, b) => b[0] - a[0]);
    const trackTaken = new Uint8Array(this.tracks.length);
    const assigned = new Array<number>(dets.length).fill(0);
    for (const [, t, d] of pairs) {
      if (trackTaken[t] || assigned[d]) continue;
      trackTaken[t] = 1;
      const tr = this.tracks[t];
      tr.box = boxes[d]!;
      tr.missed = 0;
      assigned[d] = tr.id;
    }
    this.tracks.forEach((tr, t) => {
      if (!trackTaken[t]) tr.missed += dt;
    });
    this.tracks = this.tracks.filter((tr) => tr.missed <= this.maxMissed);
    dets.forEach((d, i) => {
      if (assigned[i] || d.p < this.minScore) return;
      const tr: GreedyTrack = { id: this.nextId++, classId: d.c, box: boxes[i], missed: 0 };
      this.tracks.push(tr);
      assigned[i] = tr.id;
    });
    return dets.map((d, i) => withTrackId(d, assigned[i]));
  }

  reset(): void {
    this.tracks = [];
    this.nextId = 1;
  }
}
