import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Preprocessor } from '../../../../../plugins/detector/src/model/preprocess.js';
import { preprocessReference } from '../../../../../plugins/detector/src/model/preprocess-reference.js';
import { computeResizeTaps } from '../../../../../native/ts/resize-taps.js';
import { IMAGENET_MEAN, IMAGENET_STD } from '../../../../../plugins/detector/src/model/normalization.js';
import { testFrameBytes } from '../../../../support/onnx-model.js';

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const frame640 = testFrameBytes(640, 640, 3);

for (const size of [544, 640, 672]) {
  for (const antialias of [true, false]) {
    test(`preprocess 640 -> ${size} (antialias ${antialias}): fast equals reference`, () => {
      const sizes = { srcWidth: 640, srcHeight: 640, dstWidth: size, dstHeight: size };
      const fast = new Preprocessor(sizes, { antialias }).run(frame640);
      const ref = preprocessReference(frame640, sizes, { antialias });
      assert.equal(fast.length, 3 * size * size);
      assert.ok(maxAbsDiff(fast, ref) < 1e-5, `max abs difference ${maxAbsDiff(fast, ref)}`);
    });
  }
}

test('preprocess of an odd, non-square size pair: fast equals reference', () => {
  const src = testFrameBytes(97, 61, 9);
  for (const [dw, dh] of [
    [40, 33],
    [130, 90],
    [97, 61],
  ] as const) {
    const sizes = { srcWidth: 97, srcHeight: 61, dstWidth: dw, dstHeight: dh };
    for (const antialias of [true, false]) {
      const d = maxAbsDiff(new Preprocessor(sizes, { antialias }).run(src), preprocessReference(src, sizes, { antialias }));
      assert.ok(d < 1e-5, `${dw}x${dh} antialias ${antialias}: max abs difference ${d}`);
    }
  }
});

test('same-size preprocessing is an exact per-pixel normalization with B and R swapped', () => {
  const src = testFrameBytes(32, 16, 4);
  const out = new Preprocessor({ srcWidth: 32, srcHeight: 16, dstWidth: 32, dstHeight: 16 }).run(src);
  const plane = 32 * 16;
  for (const [x, y] of [
    [0, 0],
    [31, 15],
    [5, 9],
  ] as const) {
    const o = (y * 32 + x) * 3;
    for (let c = 0; c < 3; c++) {
      const expected = (src[o + 2 - c] / 255 - IMAGENET_MEAN[c]) / IMAGENET_STD[c];
      assert.ok(Math.abs(out[c * plane + y * 32 + x] - expected) < 1e-5, `pixel ${x},${y} channel ${c}`);
    }
  }
});

test('a uniform frame stays uniform after resizing (weights sum to 1 at the borders)', () => {
  const src = new Uint8Array(640 * 640 * 3);
  for (let i = 0; i < src.length; i += 3) {
    src[i] = 10; // B
    src[i + 1] = 128; // G
    src[i + 2] = 250; // R
  }
  const out = new Preprocessor({ srcWidth: 640, srcHeight: 640, dstWidth: 544, dstHeight: 544 }).run(src);
  const plane = 544 * 544;
  const expected = [250, 128, 10].map((v, c) => (v / 255 - IMAGENET_MEAN[c]) / IMAGENET_STD[c]);
  for (let c = 0; c < 3; c++) {
    for (const i of [0, 543, plane - 1, 1234]) assert.ok(Math.abs(out[c * plane + i] - expected[c]) < 1e-5);
  }
});

test('resize taps: antialiased shrink widens the window, enlarging keeps two taps', () => {
  const shrink = computeResizeTaps(640, 544, true);
  assert.ok(shrink.taps >= 3, `antialiased 640->544 uses ${shrink.taps} taps`);
  assert.equal(computeResizeTaps(640, 544, false).taps, 2);
  assert.equal(computeResizeTaps(544, 672, true).taps, 2);
  for (let i = 0; i < shrink.outSize; i++) {
    let sum = 0;
    for (let t = 0; t < shrink.taps; t++) sum += shrink.weights[i * shrink.taps + t];
    assert.ok(Math.abs(sum - 1) < 1e-6);
    assert.ok(shrink.start[i] >= 0 && shrink.start[i] + shrink.taps <= 640);
  }
});

test('preprocess refuses a frame of the wrong size', () => {
  const pre = new Preprocessor({ srcWidth: 640, srcHeight: 640, dstWidth: 544, dstHeight: 544 });
  assert.throws(() => pre.run(new Uint8Array(100)), /expected 640x640x3/);
});
