import { seededRandom } from '../../../../../lib/random/seeded-random.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BoxKalmanFilter, DEFAULT_KALMAN_NOISE } from '../../../../../plugins/tracker/src/kalman/box-kalman-filter.js';
import type { Box } from '../../../../../plugins/tracker/src/geometry/box.js';

type M = number[][];
const zeros = (r: number, c: number): M => Array.from({ length: r }, () => new Array<number>(c).fill(0));
const eye = (n: number): M => zeros(n, n).map((row, i) => row.map((_, j) => (i === j ? 1 : 0)));
const mul = (a: M, b: M): M => a.map((row) => b[0].map((_, j) => row.reduce((s, v, k) => s + v * b[k][j], 0)));
const tr = (a: M): M => a[0].map((_, j) => a.map((row) => row[j]));
const add = (a: M, b: M): M => a.map((row, i) => row.map((v, j) => v + b[i][j]));
const sub = (a: M, b: M): M => a.map((row, i) => row.map((v, j) => v - b[i][j]));
const diag = (v: number[]): M => v.map((x, i) => v.map((_, j) => (i === j ? x : 0)));
/** Gauss-Jordan inverse; 4x4 innovation covariances are well conditioned here. */
function inv(a: M): M {
  const n = a.length;
  const m = a.map((row, i) => [...row, ...eye(n)[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    const d = m[c][c];
    m[c] = m[c].map((v) => v / d);
    for (let r = 0; r < n; r++) if (r !== c) m[r] = m[r].map((v, j) => v - m[r][c] * m[c][j]);
  }
  return m.map((row) => row.slice(n));
}

/** The textbook 8x8 filter with the same noise model, as the reference. */
class ReferenceFilter {
  x: M;
  P: M;
  constructor(
    b: Box,
    readonly wp = DEFAULT_KALMAN_NOISE.position,
    readonly wv = DEFAULT_KALMAN_NOISE.velocity,
  ) {
    const z = meas(b);
    this.x = [...z, 0, 0, 0, 0].map((v) => [v]);
    const s = this.scales(z);
    this.P = diag([...s.map((v) => (2 * wp * v) ** 2), ...s.map((v) => (10 * wv * v) ** 2)]);
  }
  scales(z: number[]): number[] {
    const w = Math.max(z[2], 1e-6);
    const h = Math.max(z[3], 1e-6);
    return [w, h, w, h];
  }
  predict(dt: number): void {
    const F = eye(8);
    for (let k = 0; k < 4; k++) F[k][k + 4] = dt;
    const s = this.scales(this.x.slice(0, 4).map((r) => r[0]));
    const Q = diag([...s.map((v) => (this.wp * v) ** 2 * dt), ...s.map((v) => (this.wv * v) ** 2 * dt)]);
    this.x = mul(F, this.x);
    this.P = add(mul(mul(F, this.P), tr(F)), Q);
  }
  update(b: Box): void {
    const H = zeros(4, 8);
    for (let k = 0; k < 4; k++) H[k][k] = 1;
    const s = this.scales(this.x.slice(0, 4).map((r) => r[0]));
    const R = diag(s.map((v) => (this.wp * v) ** 2));
    const S = add(mul(mul(H, this.P), tr(H)), R);
    const K = mul(mul(this.P, tr(H)), inv(S));
    const y = sub(
      meas(b).map((v) => [v]),
      mul(H, this.x),
    );
    this.x = add(this.x, mul(K, y));
    this.P = mul(sub(eye(8), mul(K, H)), this.P);
  }
}
const meas = (b: Box): number[] => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0], b[3] - b[1]];

test('block-diagonal filter equals the full 8x8 Kalman filter', () => {
  const rnd = seededRandom(3);
  for (let run = 0; run < 20; run++) {
    let box: Box = [100, 200, 150, 340];
    const fast = new BoxKalmanFilter(box);
    const ref = new ReferenceFilter(box);
    for (let step = 0; step < 30; step++) {
      const dt = rnd.chance(0.2) ? 2 : 1;
      fast.predict(dt);
      ref.predict(dt);
      box = [box[0] + 4 * dt + rnd.gaussian(0, 2), box[1] + rnd.gaussian(0, 2), box[2] + 4 * dt + rnd.gaussian(0, 2), box[3] + rnd.gaussian(0, 2)];
      if (!rnd.chance(0.15)) {
        fast.update(box);
        ref.update(box);
      }
      for (let k = 0; k < 4; k++) {
        assert.ok(Math.abs(fast.pos[k] - ref.x[k][0]) < 1e-6, `pos ${k} at step ${step}`);
        assert.ok(Math.abs(fast.vel[k] - ref.x[k + 4][0]) < 1e-6, `vel ${k} at step ${step}`);
        assert.ok(Math.abs(fast.pp[k] - ref.P[k][k]) < 1e-6 * Math.max(1, ref.P[k][k]));
        assert.ok(Math.abs(fast.pv[k] - ref.P[k][k + 4]) < 1e-6 * Math.max(1, Math.abs(ref.P[k][k + 4])));
        assert.ok(Math.abs(fast.vv[k] - ref.P[k + 4][k + 4]) < 1e-6 * Math.max(1, ref.P[k + 4][k + 4]));
        // Off-block covariance really is zero in the reference: the decomposition is exact.
        for (let j = 0; j < 4; j++) if (j !== k) assert.ok(Math.abs(ref.P[k][j]) < 1e-9);
      }
    }
  }
});

test('learns a constant velocity and extrapolates through missing measurements', () => {
  const f = new BoxKalmanFilter([0, 0, 40, 100]);
  for (let i = 1; i <= 20; i++) {
    f.predict();
    f.update([5 * i, 2 * i, 5 * i + 40, 2 * i + 100]);
  }
  const [vx, vy] = f.velocity();
  assert.ok(Math.abs(vx - 5) < 0.3, `vx ${vx}`);
  assert.ok(Math.abs(vy - 2) < 0.3, `vy ${vy}`);
  for (let i = 0; i < 5; i++) f.predict();
  const b = f.box();
  assert.ok(Math.abs(b[0] - 125) < 3, `x1 after 5 blind frames: ${b[0]}`);
  assert.ok(Math.abs(b[3] - 150) < 3, `y2 after 5 blind frames: ${b[3]}`);
});

test('freezeSize stops a lost box from shrinking', () => {
  const f = new BoxKalmanFilter([0, 0, 100, 100]);
  for (let i = 1; i <= 10; i++) {
    f.predict();
    f.update([0, 0, 100 - 5 * i, 100 - 5 * i]);
  }
  f.freezeSize();
  const before = f.box();
  for (let i = 0; i < 30; i++) {
    f.freezeSize();
    f.predict();
  }
  const after = f.box();
  assert.ok(after[2] - after[0] > 0 && Math.abs(after[2] - after[0] - (before[2] - before[0])) < 1e-9);
});
