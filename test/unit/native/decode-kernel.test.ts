/**
 * The addon's RF-DETR decoding against its TypeScript twin: the same detections (classes, boxes and
 * scores to the bit: the addon hands back the logits and the score is taken as the twin takes it) on
 * random heads and on the edges: empty detections, all-equal scores, NaN logits, non-finite boxes,
 * one query, k = 1, thresholds 0 and 1, short remaps.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { seededRandom } from '../../../lib/random/index.js';
import { DetrDecoder } from '../../../plugins/detector/src/model/decode.js';
import { decodeReference } from '../../../plugins/detector/src/model/decode-reference.js';
import type { DecodeOptions } from '../../../plugins/detector/src/model/decode-options.js';
import { addonUnderTest } from './addon-under-test.js';

const addon = addonUnderTest();
const native = new DetrDecoder(addon);
const twin = new DetrDecoder(null);

function same(boxes: Float32Array, logits: Float32Array, o: DecodeOptions, what: string) {
  const got = native.decode(boxes, logits, o);
  assert.deepEqual(got, twin.decode(boxes, logits, o), what);
  assert.deepEqual(got, decodeReference(boxes, logits, o), `${what} (plain loop)`);
  return got;
}

describe('RF-DETR decoding', () => {
  assert.equal(native.implementation, 'native');
  assert.equal(twin.implementation, 'typescript');

  it('equals the twin on random heads over k, thresholds, class counts and remaps', () => {
    const rnd = seededRandom(16);
    for (const C of [23, 15, 4, 1]) {
      for (const Q of [300, 7, 1]) {
        const boxes = Float32Array.from({ length: Q * 4 }, () => rnd.range(-0.2, 1.2));
        const logits = Float32Array.from({ length: Q * C }, () => rnd.range(-8, 6));
        const remaps = [null, Int32Array.from({ length: C }, (_, i) => (i % 3 === 1 ? -1 : 22 - (i % 23))), Int32Array.of(0)];
        for (const topK of [300, 50, 1]) {
          for (const scoreThreshold of [0, 0.3, 0.99, 1]) {
            for (const remap of remaps) {
              same(
                boxes,
                logits,
                { queries: Q, classes: C, frameWidth: 640, frameHeight: 480, topK, scoreThreshold, remap },
                `Q=${Q} C=${C} k=${topK} t=${scoreThreshold}`,
              );
            }
          }
        }
      }
    }
  });

  it('gives no detections when nothing passes the threshold', () => {
    const boxes = new Float32Array(40 * 4).fill(0.5);
    const logits = new Float32Array(40 * 23).fill(-30);
    assert.deepEqual(same(boxes, logits, { queries: 40, classes: 23, frameWidth: 640, frameHeight: 640 }, 'empty'), []);
  });

  it('orders all-equal scores by flat index, and saturated ones too', () => {
    const boxes = Float32Array.from({ length: 50 * 4 }, (_, i) => 0.1 + (i % 7) * 0.1);
    for (const value of [0.5, 40, 0]) {
      const logits = new Float32Array(50 * 9).fill(value);
      for (const topK of [1, 10, 300]) {
        const got = same(boxes, logits, { queries: 50, classes: 9, frameWidth: 100, frameHeight: 100, topK, scoreThreshold: 0.2 }, `all ${value}, k=${topK}`);
        assert.equal(got.length, Math.min(topK, 450));
      }
    }
  });

  it('skips NaN logits and queries whose box is not finite', () => {
    const rnd = seededRandom(17);
    const Q = 60;
    const C = 5;
    const boxes = Float32Array.from({ length: Q * 4 }, (_, i) => (i % 37 === 0 ? Infinity : i % 41 === 0 ? NaN : rnd.next()));
    const logits = Float32Array.from({ length: Q * C }, (_, i) => (i % 3 === 0 ? NaN : rnd.range(-3, 3)));
    for (const scoreThreshold of [0, 0.3]) {
      const got = same(boxes, logits, { queries: Q, classes: C, frameWidth: 64, frameHeight: 48, topK: 300, scoreThreshold }, `NaN, t=${scoreThreshold}`);
      assert.ok(got.every((d) => Number.isFinite(d.p) && d.b.every(Number.isFinite)));
    }
    const allNaN = new Float32Array(Q * C).fill(NaN);
    assert.deepEqual(same(boxes, allNaN, { queries: Q, classes: C, frameWidth: 64, frameHeight: 48, scoreThreshold: 0 }, 'all NaN'), []);
  });

  it('refuses outputs that disagree with Q and C, from the addon too', () => {
    const o: DecodeOptions = { queries: 2, classes: 3, frameWidth: 10, frameHeight: 10 };
    assert.throws(() => native.decode(new Float32Array(7), new Float32Array(6), o), RangeError);
    const raw = new addon.DetrDecoder();
    assert.throws(() => raw.decode(new Float32Array(8), new Float32Array(5), 2, 3, 10, 0.3, 10, 10, null, new Float64Array(60)), RangeError);
    assert.throws(() => raw.decode(new Float32Array(8), new Float32Array(6), 2, 3, 10, 0.3, 10, 10, null, new Float64Array(59)), RangeError);
    assert.throws(
      () => raw.decode(new Float32Array(8), new Float64Array(6) as unknown as Float32Array, 2, 3, 10, 0.3, 10, 10, null, new Float64Array(60)),
      TypeError,
    );
  });

  it('refuses Q*C past INT32_MAX (the kernel’s int32 flat index) on the sizes alone, before any buffer length', () => {
    const raw = new addon.DetrDecoder();
    // Q = 2^20 (the largest Q) and C = 2048 make Q*C = 2^31 = INT32_MAX + 1. The buffers are a few
    // values: the size check must refuse before the length checks, so no 8 GiB logits are needed.
    const call = (queries: number, classes: number) => () =>
      raw.decode(new Float32Array(4), new Float32Array(1), queries, classes, 1, 0.3, 10, 10, null, new Float64Array(6));
    assert.throws(call(2 ** 20, 2048), (e) => e instanceof RangeError && /queries\*classes must be at most 2147483647 \(got 2147483648\)/.test(e.message));
    assert.throws(call(2 ** 20, 2 ** 16), (e) => e instanceof RangeError && /queries\*classes must be at most 2147483647/.test(e.message));
    // One class fewer fits: it goes on to the buffer lengths, which these are not.
    assert.throws(call(2 ** 20, 2047), (e) => e instanceof RangeError && /boxes must hold Q\*4 values/.test(e.message));
  });
});
