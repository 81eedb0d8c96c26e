import type { Box } from '../geometry/box.js';
import { BoxKalmanFilter, type KalmanNoise } from '../kalman/box-kalman-filter.js';

/**
 * tentative: seen, not yet trusted (no id published). confirmed: matched this frame or recently.
 * lost: confirmed but unmatched; kept and predicted for the lost buffer so it can be re-found.
 * removed: gone for good.
 */
export type TrackState = 'tentative' | 'confirmed' | 'lost' | 'removed';

export class Track {
  /** Public id, assigned at confirmation; 0 while tentative. */
  id = 0;
  state: TrackState = 'tentative';
  hits = 1;
  /** Frames since the last matched detection. */
  missed = 0;
  age = 0;
  score: number;
  readonly kf: BoxKalmanFilter;

  constructor(
    readonly classId: number,
    box: Box,
    score: number,
    noise: KalmanNoise,
  ) {
    this.kf = new BoxKalmanFilter(box, noise);
    this.score = score;
  }

  predict(dt: number): void {
    if (this.state === 'lost') this.kf.freezeSize();
    this.kf.predict(dt);
    this.age += dt;
  }

  hit(box: Box, score: number): void {
    this.kf.update(box);
    this.hits += 1;
    this.missed = 0;
    this.score = score;
  }

  box(): Box {
    return this.kf.box();
  }
}
