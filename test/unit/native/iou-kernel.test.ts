/**
 * The addon's IoU matrix against the tracker's TypeScript twin, to the bit: random boxes, identical,
 * disjoint, touching, empty and inverted boxes, NaN coordinates, class-aware pairs, empty sides.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../../../lib/random/index.js';
import { iouMatrix, type Box } from '../../../plugins/tracker/src/geometry/box.js';
import { IouKernel, NATIVE_MIN_PAIRS } from '../../../plugins/tracker/src/geometry/iou-kernel.js';
import { addonUnderTest } from './addon-under-test.js';

const addon = addonUnderTest();
const kernel = new IouKernel(addon);

describe('IoU matrix', () => {
  it('equals the twin to the bit on random and edge boxes', () => {
    const rnd = seededRandom(18);
    const random = (): Box => {
      const x = rnd.range(0, 600);
      const y = rnd.range(0, 600);
      return [x, y, x + rnd.range(0, 120), y + rnd.range(0, 200)];
    };
    const edges: Box[] = [
      [10, 10, 50, 50],
      [10, 10, 50, 50],
      [50, 10, 90, 50],
      [20, 20, 20, 40],
      [60, 60, 40, 40],
      [NaN, 0, 10, 10],
      [0, 0, Infinity, 10],
      [-0, -0, 0, 0],
      [1e-300, 1e-300, 2e-300, 2e-300],
    ];
    // 49 x 42 pairs: above NATIVE_MIN_PAIRS, so the addon computes it.
    const a = [...edges, ...Array.from({ length: 40 }, random)];
    const b = [...Array.from({ length: 33 }, random), ...edges];
    assert.ok(a.length * b.length >= NATIVE_MIN_PAIRS);
    assert.equal(kernel.implementation, 'native');
    assert.deepEqual(kernel.matrix(a, b), iouMatrix(a, b));
    const classA = a.map((_, i) => i % 3);
    const classB = b.map((_, i) => i % 2);
    const aware = kernel.matrix(a, b, classA, classB);
    assert.deepEqual(aware, iouMatrix(a, b, classA, classB));
    // a[0] and b[33] are the same box: IoU 1, or 0 when their classes differ (0 and 1).
    assert.equal(kernel.matrix(a, b)[33], 1);
    assert.equal(aware[33], 0);
  });

  it('gives an empty matrix for an empty side and falls back to the twin for class ids that are not integers', () => {
    assert.deepEqual(kernel.matrix([], [[0, 0, 1, 1]]), new Float64Array(0));
    const a: Box[] = Array.from({ length: 21 }, (_, i) => [i, i, i + 10, i + 10]);
    const half = a.map((_, i) => i + 0.5);
    assert.deepEqual(kernel.matrix(a, a, half, half), iouMatrix(a, a, half, half));
  });

  it('refuses mismatched arrays in the addon itself', () => {
    assert.throws(() => addon.iouMatrix(new Float64Array(5), new Float64Array(4), null, null, new Float64Array(1)), RangeError);
    assert.throws(() => addon.iouMatrix(new Float64Array(4), new Float64Array(4), null, null, new Float64Array(2)), RangeError);
    assert.throws(() => addon.iouMatrix(new Float64Array(4), new Float64Array(4), Int32Array.of(1), null, new Float64Array(1)), TypeError);
  });
});
