import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DetrDecoder, decodeDetr } from '../../../../../plugins/detector/src/model/decode.js';
import { decodeReference } from '../../../../../plugins/detector/src/model/decode-reference.js';
import type { DecodeOptions } from '../../../../../plugins/detector/src/model/decode-options.js';
import { findDetrOutputs } from '../../../../../plugins/detector/src/model/detr-outputs.js';
import { seededRandom } from '../../../../support/onnx-model.js';

function randomOutputs(Q: number, C: number, seed: number, logitRange: [number, number] = [-6, 3]) {
  const rnd = seededRandom(seed);
  const boxes = Float32Array.from({ length: Q * 4 }, (_, i) => (i % 4 < 2 ? rnd() : 0.02 + rnd() * 0.5));
  const logits = Float32Array.from({ length: Q * C }, () => logitRange[0] + rnd() * (logitRange[1] - logitRange[0]));
  return { boxes, logits };
}

test('decode: fast equals reference over thresholds, k and class counts', () => {
  const decoder = new DetrDecoder();
  for (const C of [23, 15, 4]) {
    for (const [seed, range] of [
      [1, [-6, 3]],
      [2, [-2, 8]],
      [3, [-12, -1]],
    ] as const) {
      const { boxes, logits } = randomOutputs(300, C, seed * 100 + C, [range[0], range[1]]);
      for (const topK of [300, 50, 1]) {
        for (const scoreThreshold of [0, 0.3, 0.5, 0.99]) {
          const o: DecodeOptions = { queries: 300, classes: C, frameWidth: 640, frameHeight: 640, topK, scoreThreshold };
          const ref = decodeReference(boxes, logits, o);
          assert.deepEqual(decoder.decode(boxes, logits, o), ref, `C=${C} seed=${seed} k=${topK} t=${scoreThreshold}`);
          assert.ok(ref.length <= topK);
        }
      }
    }
  }
});

test('decode: ties and saturated logits order by flat index in both twins', () => {
  const Q = 40;
  const C = 5;
  const boxes = new Float32Array(Q * 4).fill(0.5);
  // Many equal logits and logits so large that sigmoid rounds to exactly 1.
  const logits = Float32Array.from({ length: Q * C }, (_, i) => (i % 7 === 0 ? 2 : i % 11 === 0 ? 40 + (i % 3) : -1));
  for (const topK of [3, 10, 200]) {
    const o: DecodeOptions = { queries: Q, classes: C, frameWidth: 100, frameHeight: 50, topK, scoreThreshold: 0.2 };
    assert.deepEqual(decodeDetr(boxes, logits, o), decodeReference(boxes, logits, o));
  }
});

test('decode: boxes become pixel corners of the frame, clamped, classes remapped or dropped', () => {
  const boxes = Float32Array.from([0.5, 0.5, 0.25, 0.5, /* q1 */ 0.05, 0.95, 0.2, 0.2]);
  const logits = Float32Array.from([/* q0 */ 5, -9, -9, /* q1 */ -9, -9, 4]);
  const remap = Int32Array.from([0, 7]); // class 2 has no production id
  const o: DecodeOptions = { queries: 2, classes: 3, frameWidth: 640, frameHeight: 480, remap, scoreThreshold: 0.3 };
  const dets = decodeDetr(boxes, logits, o);
  assert.equal(dets.length, 1);
  assert.equal(dets[0].c, 0);
  assert.ok(Math.abs(dets[0].p - 1 / (1 + Math.exp(-5))) < 1e-12);
  assert.deepEqual(dets[0].b, [240, 120, 400, 360]);
  assert.deepEqual(decodeReference(boxes, logits, o), dets);

  const unmapped = decodeDetr(boxes, logits, { ...o, remap: null });
  assert.equal(unmapped.length, 2);
  const q1 = unmapped.find((d) => d.c === 2)!;
  assert.ok(q1.b[0] === 0 && q1.b[3] === 480, `clamped to the frame: ${q1.b.join(',')}`);
});

test('decode: a NaN logit is no detection and does not take a top-k slot', () => {
  const boxes = new Float32Array(3 * 4).fill(0.5);
  const logits = Float32Array.from([NaN, 3, NaN, 2, NaN, 1]);
  const o: DecodeOptions = { queries: 3, classes: 2, frameWidth: 10, frameHeight: 10, topK: 2, scoreThreshold: 0 };
  const dets = decodeDetr(boxes, logits, o);
  assert.deepEqual(
    dets.map((d) => d.c),
    [1, 1],
  );
  assert.deepEqual(decodeReference(boxes, logits, o), dets);
});

test('decode: a query whose box is not finite is no detection and does not take a top-k slot', () => {
  // fp16 overflow on an accelerator gives Infinity or NaN boxes; one must not make the frame's dets unpublishable.
  const boxes = Float32Array.from([
    0.5,
    0.5,
    0.25,
    0.25,
    /* q1 */ NaN,
    0.5,
    0.25,
    0.25,
    /* q2 */ 0.25,
    0.25,
    Infinity,
    0.125,
    /* q3 */ 0.75,
    0.75,
    0.125,
    0.125,
  ]);
  const logits = Float32Array.from([1, 6, 5, 2]);
  const o: DecodeOptions = { queries: 4, classes: 1, frameWidth: 100, frameHeight: 100, topK: 2, scoreThreshold: 0 };
  const dets = decodeDetr(boxes, logits, o);
  assert.deepEqual(
    dets.map((d) => d.b),
    [
      [68.75, 68.75, 81.25, 81.25],
      [37.5, 37.5, 62.5, 62.5],
    ],
  );
  assert.deepEqual(decodeReference(boxes, logits, o), dets);
});

test('decode: inconsistent tensor sizes are refused', () => {
  assert.throws(() => decodeDetr(new Float32Array(8), new Float32Array(5), { queries: 2, classes: 3, frameWidth: 1, frameHeight: 1 }), /logits has 5/);
  assert.throws(() => decodeDetr(new Float32Array(7), new Float32Array(6), { queries: 2, classes: 3, frameWidth: 1, frameHeight: 1 }), /boxes has 7/);
});

test('output lookup: RF-DETR names, other DETR names, shapes, and a clear refusal', () => {
  assert.deepEqual(
    findDetrOutputs([
      { name: 'labels', dims: [1, 300, 23] },
      { name: 'dets', dims: [1, 300, 4] },
    ]),
    { boxes: 'dets', logits: 'labels' },
  );
  assert.deepEqual(
    findDetrOutputs([
      { name: 'pred_logits', dims: [1, 300, 4] },
      { name: 'pred_boxes', dims: [1, 300, 4] },
    ]),
    {
      boxes: 'pred_boxes',
      logits: 'pred_logits',
    },
  );
  assert.deepEqual(
    findDetrOutputs([
      { name: 'a', dims: [1, 300, 15] },
      { name: 'b', dims: [1, 300, 4] },
    ]),
    { boxes: 'b', logits: 'a' },
  );
  assert.throws(
    () =>
      findDetrOutputs([
        { name: 'a', dims: [1, 300, 4] },
        { name: 'b', dims: [1, 300, 4] },
      ]),
    /cannot tell boxes/,
  );
});
