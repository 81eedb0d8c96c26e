/**
 * The addon's resampling against its TypeScript twins: the tap tables to the bit, the detector's
 * NCHW preprocessing and the text cascade's crops within 1e-5, the production bake's uint8 BGR input
 * to the bit; at the model sizes, odd sizes, 1x1 frames and crops at and beyond the frame's edges.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BgrResizer,
  CropResizer,
  bgrResampleReference,
  computeResizeTaps,
  quantizeResizeTaps,
  resampleReference,
  type CropBox,
} from '../../../native/ts/index.js';
import { seededRandom } from '../../../lib/random/index.js';
import { Preprocessor } from '../../../plugins/detector/src/model/preprocess.js';
import { preprocessReference } from '../../../plugins/detector/src/model/preprocess-reference.js';
import { testFrameBytes } from '../../support/onnx-model.js';
import { addonUnderTest, maxAbsDiff, randomBytes } from './addon-under-test.js';

const addon = addonUnderTest();
const rnd = seededRandom(15);
const next = () => rnd.next();

describe('resize taps', () => {
  it('are the twin tables to the bit, quantized ones too', () => {
    const pairs: [number, number][] = [
      [640, 544],
      [640, 640],
      [640, 672],
      [1, 1],
      [1, 384],
      [3, 384],
      [97, 40],
      [61, 130],
      [1000, 3],
      [5000, 1],
      [2, 1],
      [384, 383],
    ];
    for (const [inSize, outSize] of pairs) {
      for (const antialias of [true, false]) {
        const ts = computeResizeTaps(inSize, outSize, antialias);
        const native = addon.resizeTaps(inSize, outSize, antialias);
        const what = `${inSize} -> ${outSize} antialias ${antialias}`;
        assert.equal(native.taps, ts.taps, what);
        assert.deepEqual(native.start, ts.start, what);
        assert.deepEqual(native.weights, ts.weights, what);
        const q = quantizeResizeTaps(ts);
        assert.deepEqual(native.quantized, q, what);
        for (let i = 0; i < outSize; i++) {
          const window = q.subarray(i * ts.taps, (i + 1) * ts.taps);
          assert.equal(
            window.reduce((a, b) => a + b, 0),
            4096,
            `${what}: window ${i} sums to 4096`,
          );
          assert.ok(window.every((v) => v >= 0));
        }
      }
    }
  });
});

describe('preprocessing to NCHW float32', () => {
  const sizes = (srcWidth: number, srcHeight: number, dstWidth: number, dstHeight: number) => ({ srcWidth, srcHeight, dstWidth, dstHeight });

  it('equals the twin within 1e-5 at the model sizes, antialiased and two-tap', () => {
    const frame = testFrameBytes(640, 640, 5);
    for (const size of [544, 640, 672]) {
      for (const antialias of [true, false]) {
        const s = sizes(640, 640, size, size);
        const native = new Preprocessor(s, { antialias, addon });
        const twin = new Preprocessor(s, { antialias, addon: null });
        assert.equal(native.implementation, 'native');
        assert.equal(twin.implementation, 'typescript');
        const d = maxAbsDiff(native.run(frame), twin.run(frame));
        assert.ok(d <= 1e-5, `640 -> ${size} antialias ${antialias}: ${d}`);
      }
    }
  });

  it('equals the twin and the plain loop on odd sizes, 1x1 frames and random bytes', () => {
    const cases = [
      sizes(97, 61, 40, 33),
      sizes(97, 61, 130, 90),
      sizes(97, 61, 97, 61),
      sizes(1, 1, 1, 1),
      sizes(1, 1, 5, 3),
      sizes(7, 1, 3, 2),
      sizes(3, 200, 9, 17),
      sizes(33, 33, 1, 1),
    ];
    for (const s of cases) {
      const frame = randomBytes(s.srcWidth * s.srcHeight * 3, next);
      for (const antialias of [true, false]) {
        const native = new Preprocessor(s, { antialias, addon }).run(frame);
        const twin = new Preprocessor(s, { antialias, addon: null }).run(frame);
        const reference = preprocessReference(frame, s, { antialias });
        const what = `${s.srcWidth}x${s.srcHeight} -> ${s.dstWidth}x${s.dstHeight} antialias ${antialias}`;
        assert.ok(maxAbsDiff(native, twin) <= 1e-5, `${what}: native vs twin ${maxAbsDiff(native, twin)}`);
        assert.ok(maxAbsDiff(native, reference) <= 1e-5, `${what}: native vs plain loop ${maxAbsDiff(native, reference)}`);
      }
    }
  });

  it('refuses a frame of the wrong size and a Uint8ClampedArray in the addon itself', () => {
    const pre = new Preprocessor(sizes(4, 4, 2, 2), { addon });
    assert.throws(() => pre.run(new Uint8Array(47)), RangeError);
    const resampler = new addon.Resampler();
    const unit = Float64Array.of(1, 1, 1);
    const out = new Float32Array(12);
    assert.throws(() => resampler.nchw(new Uint8Array(47), 4, 4, Int32Array.of(0, 0, 4, 4), 2, 2, true, unit, unit, out), RangeError);
    assert.throws(
      () => resampler.nchw(new Uint8ClampedArray(48) as unknown as Uint8Array, 4, 4, Int32Array.of(0, 0, 4, 4), 2, 2, true, unit, unit, out),
      TypeError,
    );
    assert.throws(() => resampler.nchw(new Uint8Array(48), 4, 4, Int32Array.of(1, 1, 4, 4), 2, 2, true, unit, unit, out), /inside the frame/);
    assert.throws(() => resampler.nchw(new Uint8Array(48), 4, 4, Int32Array.of(0, 0, 4, 4), 2, 2, true, unit, unit, new Float32Array(11)), RangeError);
    assert.throws(() => resampler.nchw(new Uint8Array(48), 4, 4, Int32Array.of(0, 0, 4, 4), 2.5, 2, true, unit, unit, out), RangeError);
  });
});

describe('text crops to 384x384 RGB 0..1', () => {
  it('equal the twin within 1e-5 for several crops per frame, at and beyond the edges', () => {
    for (const [width, height] of [
      [640, 640],
      [97, 61],
      [1, 1],
    ]) {
      const frame = { data: randomBytes(width * height * 3, next), width, height };
      const boxes: CropBox[] = [
        [0, 0, width, height],
        [width * 0.25, height * 0.4, width * 0.6, height * 0.55],
        [-20, -5, width * 0.1, height * 0.3],
        [width - 3.5, height - 2.2, width + 40, height + 9],
        [width / 2, height / 2, width / 2, height / 2],
        [5.7, 3.2, 5.9, 3.3],
      ];
      const native = new CropResizer({ addon }).run(frame, boxes);
      const twin = new CropResizer({ addon: null }).run(frame, boxes);
      assert.deepEqual(native.rects, twin.rects);
      assert.equal(native.tensor.length, boxes.length * 3 * 384 * 384);
      const d = maxAbsDiff(native.tensor, twin.tensor);
      assert.ok(d <= 1e-5, `${width}x${height}: ${d}`);
      // The plain loop on each rectangle agrees too.
      native.rects.forEach((r, i) => {
        const reference = resampleReference(frame.data, width, r, 384, 384, true, (v) => v);
        const got = native.tensor.subarray(i * 3 * 384 * 384, (i + 1) * 3 * 384 * 384);
        assert.ok(maxAbsDiff(got, reference) <= 1e-5, `crop ${i} against the plain loop`);
      });
    }
  });

  it('land on the right pixels: a crop of a coloured patch is that colour, in RGB planes, 0..1', () => {
    const width = 160;
    const height = 90;
    const data = new Uint8Array(width * height * 3).fill(255);
    // A blue-green-red patch (B=10, G=128, R=250) at x 40..71, y 20..35; white elsewhere.
    for (let y = 20; y < 36; y++) {
      for (let x = 40; x < 72; x++) data.set([10, 128, 250], (y * width + x) * 3);
    }
    for (const resizer of [new CropResizer({ addon }), new CropResizer({ addon: null })]) {
      const { tensor, rects } = resizer.run({ data, width, height }, [[40, 20, 72, 36]]);
      assert.deepEqual(rects, [{ x: 40, y: 20, width: 32, height: 16 }]);
      const plane = 384 * 384;
      for (const [c, v] of [250, 128, 10].entries()) {
        for (const i of [0, 383, plane - 1, 200 * 384 + 17])
          assert.ok(Math.abs(tensor[c * plane + i] - v / 255) < 1e-6, `${resizer.implementation} plane ${c}`);
      }
    }
  });

  it('refuse a box that is not finite and take nothing for no boxes', () => {
    const frame = { data: new Uint8Array(12), width: 2, height: 2 };
    assert.throws(() => new CropResizer({ addon }).run(frame, [[0, 0, NaN, 1]]), RangeError);
    assert.equal(new CropResizer({ addon }).run(frame, []).tensor.length, 0);
  });
});

describe('uint8 BGR888 resampling (the production bake input)', () => {
  it('is the twin and the plain loop to the bit', () => {
    for (const [sw, sh, dw, dh] of [
      [720, 480, 640, 640],
      [640, 640, 640, 640],
      [97, 61, 40, 33],
      [61, 97, 130, 90],
      [1, 1, 1, 1],
      [1, 1, 3, 2],
      [5000, 1, 1, 1],
    ]) {
      const frame = randomBytes(sw * sh * 3, next);
      for (const antialias of [true, false]) {
        const native = new BgrResizer({ srcWidth: sw, srcHeight: sh, dstWidth: dw, dstHeight: dh }, antialias, addon);
        const twin = new BgrResizer({ srcWidth: sw, srcHeight: sh, dstWidth: dw, dstHeight: dh }, antialias, null);
        const what = `${sw}x${sh} -> ${dw}x${dh} antialias ${antialias}`;
        const got = native.run(frame);
        assert.deepEqual(got, twin.run(frame), what);
        assert.deepEqual(got, bgrResampleReference(frame, sw, sh, dw, dh, antialias), what);
        if (sw === dw && sh === dh) assert.deepEqual(got, frame, `${what} is a copy`);
      }
    }
  });
});
