import type { Box } from '../geometry/box.js';

/**
 * Noise scales relative to the box size, as in SORT/ByteTrack: a big (near) box moves more pixels
 * per frame than a small (far) one, so fixed pixel noise would be wrong for both.
 */
export interface KalmanNoise {
  /** Standard deviation of position per frame, as a fraction of the box size. */
  position: number;
  /** Standard deviation of velocity per frame, as a fraction of the box size. */
  velocity: number;
}

export const DEFAULT_KALMAN_NOISE: KalmanNoise = { position: 1 / 20, velocity: 1 / 160 };

/**
 * Constant-velocity Kalman filter on (cx, cy, w, h) and their velocities.
 *
 * With this motion model (F pairs each quantity only with its own velocity), a measurement of the
 * four quantities (H) and diagonal Q, R and initial P, the 8x8 covariance stays block-diagonal: four
 * independent 2x2 filters. Keeping only those blocks is exact and avoids 8x8 matrix products on the
 * per-frame path (the unit test holds it equal to the full matrix form).
 */
export class BoxKalmanFilter {
  /** Positions (cx, cy, w, h) then velocities, per axis. */
  readonly pos = new Float64Array(4);
  readonly vel = new Float64Array(4);
  /** Per axis: var(pos), cov(pos, vel), var(vel). */
  readonly pp = new Float64Array(4);
  readonly pv = new Float64Array(4);
  readonly vv = new Float64Array(4);

  constructor(
    box: Box,
    private readonly noise: KalmanNoise = DEFAULT_KALMAN_NOISE,
  ) {
    const z = measurementOf(box);
    for (let k = 0; k < 4; k++) {
      const s = this.scale(k, z);
      this.pos[k] = z[k]!;
      this.vel[k] = 0;
      this.pp[k] = (2 * noise.position * s) ** 2;
      this.pv[k] = 0;
      this.vv[k] = (10 * noise.velocity * s) ** 2;
    }
  }

  /** x-like axes (cx, w) scale with the width, y-like axes (cy, h) with the height. */
  private scale(axis: number, z: ArrayLike<number>): number {
    return axis % 2 === 0 ? z[2] : z[3];
  }

  /** Advance by dt frames (1 for consecutive frames; more when frames were skipped). */
  predict(dt = 1): void {
    const cur = [this.pos[0], this.pos[1], Math.max(this.pos[2], 1e-6), Math.max(this.pos[3], 1e-6)];
    for (let k = 0; k < 4; k++) {
      const s = this.scale(k, cur);
      const qp = (this.noise.position * s) ** 2 * dt;
      const qv = (this.noise.velocity * s) ** 2 * dt;
      this.pos[k] = this.pos[k] + dt * this.vel[k];
      const pp = this.pp[k];
      const pv = this.pv[k];
      const vv = this.vv[k];
      this.pp[k] = pp + 2 * dt * pv + dt * dt * vv + qp;
      this.pv[k] = pv + dt * vv;
      this.vv[k] = vv + qv;
    }
  }

  update(box: Box): void {
    const z = measurementOf(box);
    for (let k = 0; k < 4; k++) {
      const s = this.scale(k, this.pos);
      const r = (this.noise.position * s) ** 2;
      const pp = this.pp[k];
      const pv = this.pv[k];
      const innovationVar = pp + r;
      const kp = pp / innovationVar;
      const kv = pv / innovationVar;
      const y = z[k] - this.pos[k];
      this.pos[k] = this.pos[k] + kp * y;
      this.vel[k] = this.vel[k] + kv * y;
      this.pp[k] = (1 - kp) * pp;
      this.pv[k] = (1 - kp) * pv;
      this.vv[k] = this.vv[k] - kv * pv;
    }
  }

  /** Stop the size from drifting while nothing is measured (a lost track would shrink to nothing). */
  freezeSize(): void {
    this.vel[2] = 0;
    this.vel[3] = 0;
  }

  box(): Box {
    const w = Math.max(this.pos[2], 0);
    const h = Math.max(this.pos[3], 0);
    const cx = this.pos[0];
    const cy = this.pos[1];
    return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
  }

  velocity(): [vx: number, vy: number] {
    return [this.vel[0], this.vel[1]];
  }
}

export function measurementOf(b: Box): Float64Array {
  const w = b[2] - b[0];
  const h = b[3] - b[1];
  return Float64Array.of(b[0] + w / 2, b[1] + h / 2, w, h);
}
