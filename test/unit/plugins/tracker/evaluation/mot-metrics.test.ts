import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateMot, hypothesesFromDetections, type EvalFrame } from '../../../../../plugins/tracker/src/evaluation/mot-metrics.js';
import type { Box } from '../../../../../plugins/tracker/src/geometry/box.js';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';

const A: Box = [0, 0, 10, 10];
const B: Box = [100, 100, 110, 110];
const FAR: Box = [300, 300, 310, 310];
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} != ${b}`);

test('perfect tracking scores 1 everywhere', () => {
  const frames: EvalFrame[] = [0, 1, 2].map(() => ({
    truth: [
      { id: 1, box: A },
      { id: 2, box: B },
    ],
    hypotheses: [
      { id: 10, box: A },
      { id: 20, box: B },
    ],
  }));
  const m = evaluateMot(frames);
  assert.deepEqual([m.tp, m.fp, m.fn, m.idSwitches, m.gtIds, m.hypIds, m.mostlyTracked], [6, 0, 0, 0, 2, 2, 2]);
  for (const v of [m.mota, m.motp, m.idf1, m.idp, m.idr, m.precision, m.recall]) close(v, 1);
});

test('one identity switch halfway', () => {
  const frames: EvalFrame[] = [5, 5, 6, 6].map((h) => ({ truth: [{ id: 1, box: A }], hypotheses: [{ id: h, box: A }] }));
  const m = evaluateMot(frames);
  assert.equal(m.idSwitches, 1);
  close(m.mota, 0.75);
  assert.equal(m.idtp, 2);
  close(m.idf1, 0.5);
  close(m.idp, 0.5);
  close(m.idr, 0.5);
  close(m.precision, 1);
});

test('a miss, a false positive and a fragmentation', () => {
  const frames: EvalFrame[] = [
    { truth: [{ id: 1, box: A }], hypotheses: [{ id: 7, box: A }] },
    {
      truth: [{ id: 1, box: A }],
      hypotheses: [
        { id: 7, box: A },
        { id: 9, box: FAR },
      ],
    },
    { truth: [{ id: 1, box: A }], hypotheses: [] },
    { truth: [{ id: 1, box: A }], hypotheses: [{ id: 7, box: A }] },
  ];
  const m = evaluateMot(frames);
  assert.deepEqual([m.tp, m.fp, m.fn, m.idSwitches, m.fragmentations], [3, 1, 1, 0, 1]);
  close(m.mota, 0.5);
  close(m.precision, 0.75);
  close(m.recall, 0.75);
  close(m.idf1, 0.75);
  assert.deepEqual([m.mostlyTracked, m.mostlyLost], [0, 0]);
});

test('IoU threshold is inclusive at 0.5', () => {
  const at = (box: Box) => evaluateMot([{ truth: [{ id: 1, box: [0, 0, 10, 10] }], hypotheses: [{ id: 1, box }] }]);
  assert.equal(at([0, 0, 10, 20]).tp, 1);
  assert.equal(at([0, 0, 10, 20.5]).tp, 0);
  assert.equal(at([0, 0, 10, 20.5]).fp, 1);
  assert.equal(evaluateMot([{ truth: [{ id: 1, box: [0, 0, 10, 10] }], hypotheses: [{ id: 1, box: [0, 0, 10, 20.5] }] }], { iouThreshold: 0.4 }).tp, 1);
});

test('a still-valid correspondence is kept even when another hypothesis fits better', () => {
  const frames: EvalFrame[] = [
    {
      truth: [{ id: 1, box: A }],
      hypotheses: [
        { id: 1, box: A },
        { id: 2, box: FAR },
      ],
    },
    {
      truth: [{ id: 1, box: A }],
      hypotheses: [
        { id: 1, box: [0, 0, 10, 16] },
        { id: 2, box: A },
      ],
    }, // IoU 0.625 and 1
    {
      truth: [{ id: 1, box: A }],
      hypotheses: [
        { id: 1, box: [0, 0, 10, 30] },
        { id: 2, box: A },
      ],
    }, // IoU 0.33 and 1
  ];
  const m = evaluateMot(frames);
  assert.equal(m.idSwitches, 1, 'only frame 2, where hypothesis 1 stops covering the object');
  assert.deepEqual([m.tp, m.fp], [3, 3]);
});

test('switching back and forth counts every switch', () => {
  const frames: EvalFrame[] = [1, 2, 1, 1, 2].map((h) => ({ truth: [{ id: 1, box: A }], hypotheses: [{ id: h, box: A }] }));
  assert.equal(evaluateMot(frames).idSwitches, 3);
});

test('IDF1 uses the globally best trajectory matching, not a greedy one', () => {
  // (a,x) overlap 3 frames, (a,y) 2, (b,x) 2: greedy takes (a,x) = 3, the optimum (a,y)+(b,x) = 4.
  const frames: EvalFrame[] = [
    ...[0, 1, 2].map(() => ({ truth: [{ id: 1, box: A }], hypotheses: [{ id: 100, box: A }] })),
    ...[3, 4].map(() => ({ truth: [{ id: 1, box: A }], hypotheses: [{ id: 200, box: A }] })),
    ...[5, 6].map(() => ({ truth: [{ id: 2, box: B }], hypotheses: [{ id: 100, box: B }] })),
  ];
  const m = evaluateMot(frames);
  assert.equal(m.idtp, 4);
  close(m.idf1, 8 / 14);
  assert.equal(m.idSwitches, 1);
  close(m.mota, 1 - 1 / 7);
});

test("don't-care truth: a hypothesis on a hidden object is neither a hit nor a false positive", () => {
  const hiddenBehindA: Box = [1, 0, 11, 10];
  const frames: EvalFrame[] = [
    {
      truth: [
        { id: 1, box: A, visibility: 1 },
        { id: 2, box: hiddenBehindA, visibility: 0.1 },
        { id: 3, box: B, visibility: 0.05 },
      ],
      hypotheses: [
        { id: 1, box: A },
        { id: 3, box: B },
      ],
    },
  ];
  const strict = evaluateMot(frames);
  assert.deepEqual([strict.tp, strict.fp, strict.fn], [2, 0, 1]);
  const lenient = evaluateMot(frames, { minVisibility: 0.3 });
  // Hypothesis 1 belongs to visible object 1 even though hidden object 2 overlaps it too.
  assert.deepEqual([lenient.gtBoxes, lenient.hypBoxes, lenient.tp, lenient.fp, lenient.fn], [1, 1, 1, 0, 0]);
  close(lenient.idf1, 1);
});

test('class-aware evaluation refuses cross-class matches', () => {
  const frames: EvalFrame[] = [{ truth: [{ id: 1, box: A, classId: 0 }], hypotheses: [{ id: 1, box: A, classId: 2 }] }];
  assert.equal(evaluateMot(frames).tp, 1);
  assert.equal(evaluateMot(frames, { classAware: true }).tp, 0);
});

test('empty sequences and bad input', () => {
  const m = evaluateMot([]);
  assert.deepEqual([m.frames, m.mota, m.idf1], [0, 0, 0]);
  assert.equal(evaluateMot([{ truth: [], hypotheses: [{ id: 1, box: A }] }]).fp, 1);
  assert.throws(
    () =>
      evaluateMot([
        {
          truth: [
            { id: 1, box: A },
            { id: 1, box: B },
          ],
          hypotheses: [],
        },
      ]),
    (e) => isLookoutError(e, 'argument_invalid') && /twice/.test(e.message),
  );
  assert.throws(
    () => evaluateMot([{ truth: [], hypotheses: [{ id: 1, box: [0, NaN, 1, 1] }] }]),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.throws(
    () => evaluateMot([], { iouThreshold: 0 }),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
});

test('hypotheses from tracker output: only detections with a track_id', () => {
  const h = hypothesesFromDetections([
    { c: 0, p: 0.9, b: [0, 0, 10, 10, 0.3], track_id: 4 },
    { c: 2, p: 0.9, b: [5, 5, 10, 10] },
  ]);
  assert.deepEqual(h, [{ id: 4, box: [0, 0, 10, 10], classId: 0 }]);
});
