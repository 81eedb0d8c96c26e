import { seededRandom } from '../../../../../lib/random/seeded-random.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Detection } from '../../../../../core/src/contracts/detection.js';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { ByteTracker, type MultiObjectTracker } from '../../../../../plugins/tracker/src/tracking/byte-tracker.js';
import { GreedyIouTracker } from '../../../../../plugins/tracker/src/tracking/greedy-iou-tracker.js';
import {
  crowdScene,
  detectScene,
  peopleCrossingScene,
  personAndCarScene,
  pillarOcclusionScene,
  renderTruth,
  type TruthFrame,
} from '../../../../../plugins/tracker/src/evaluation/synthetic-scenes.js';
import { evaluateMot, hypothesesFromDetections } from '../../../../../plugins/tracker/src/evaluation/mot-metrics.js';
import { trackIdsPerObject } from '../../../../support/track-identity.js';

function run(tracker: MultiObjectTracker, dets: Detection[][]): Detection[][] {
  return dets.map((d) => tracker.update(d));
}

/** Truth id -> every track id its detections carried (matched by IoU >= 0.5). */
function idsPerObject(truth: TruthFrame[], outputs: Detection[][]): Map<number, Set<number>> {
  // Only objects a detector could see: a hidden one's box may overlap a visible one's better.
  return trackIdsPerObject(
    truth.map((t) => t.truth),
    outputs,
    (g) => g.visibility >= 0.25,
  );
}

function assertIdentitiesSurvive(truth: TruthFrame[], outputs: Detection[][], objects: number[]): void {
  const ids = idsPerObject(truth, outputs);
  const seen = new Set<number>();
  for (const id of objects) {
    const got = ids.get(id);
    assert.ok(got, `object ${id} never got a track id`);
    assert.equal(got.size, 1, `object ${id} carried ids ${[...got].join(', ')}`);
    const [only] = got;
    assert.ok(!seen.has(only), `track id ${only} was given to two objects`);
    seen.add(only);
  }
}

test('two people crossing keep their identities (clean detections)', () => {
  const truth = renderTruth(peopleCrossingScene());
  const noiseless = { boxSd: 0, missRate: 0, falsePositiveRate: 0, minVisibility: 0.25, lowVisibility: 0.6 };
  const dets = detectScene(truth, 1, noiseless);
  // The farther person really is hidden for a while: the test covers an occlusion, not a near miss.
  assert.ok(truth.some((f) => f.truth.find((g) => g.id === 2)!.visibility < 0.25));
  const out = run(new ByteTracker(), dets);
  assertIdentitiesSurvive(truth, out, [1, 2]);
});

test('two people crossing keep their identities with noisy detections, over many seeds', () => {
  const truth = renderTruth(peopleCrossingScene());
  for (let seed = 1; seed <= 20; seed++) {
    const out = run(new ByteTracker(), detectScene(truth, seed));
    assertIdentitiesSurvive(truth, out, [1, 2]);
  }
});

test('a person hidden for 5 frames with no detection at all is re-found with the same id', () => {
  const truth = renderTruth(pillarOcclusionScene(60, [25, 30]));
  for (let seed = 1; seed <= 20; seed++) {
    const dets = detectScene(truth, seed, { boxSd: 0.02, missRate: 0, falsePositiveRate: 0, minVisibility: 0.25, lowVisibility: 0.6 });
    for (let f = 25; f < 30; f++)
      assert.ok(
        dets[f].every((d) => d.b[0] < 200 || d.b[0] > 400),
        'no detection of the hidden person',
      );
    const tracker = new ByteTracker();
    const out = run(tracker, dets);
    assertIdentitiesSurvive(truth, out, [1, 2]);
  }
});

test('the lost buffer bounds how long an occluded track can be re-found', () => {
  const truth = renderTruth(pillarOcclusionScene(60, [20, 32]));
  const dets = detectScene(truth, 5, { boxSd: 0, missRate: 0, falsePositiveRate: 0, minVisibility: 0.25, lowVisibility: 0.6 });
  const keep = idsPerObject(truth, run(new ByteTracker({ lostBufferFrames: 30 }), dets));
  assert.equal(keep.get(1)!.size, 1);
  // 12 hidden frames with a buffer of 5: the old track is dropped and the person comes back as new.
  const drop = idsPerObject(truth, run(new ByteTracker({ lostBufferFrames: 5 }), dets));
  assert.equal(drop.get(1)!.size, 2);
});

test('class-aware matching: no id passes between a person and a car', () => {
  const truth = renderTruth(personAndCarScene());
  for (let seed = 1; seed <= 10; seed++) {
    const out = run(new ByteTracker(), detectScene(truth, seed));
    assertIdentitiesSurvive(truth, out, [1, 2]);
    const byId = new Map<number, Set<number>>();
    for (const d of out.flat()) if (d.track_id !== undefined) (byId.get(d.track_id) ?? byId.set(d.track_id, new Set()).get(d.track_id)!).add(d.c);
    for (const [id, classes] of byId) assert.equal(classes.size, 1, `track ${id} had classes ${JSON.stringify([...classes])}`);
  }
  // Same boxes, class-blind: a car box sitting exactly where the person was takes the person's track.
  const person: Detection = { c: 0, p: 0.9, b: [100, 100, 150, 240] };
  const blind = new ByteTracker({ classAware: false, minHits: 1 });
  const aware = new ByteTracker({ minHits: 1 });
  const idBlind = blind.update([person])[0].track_id;
  aware.update([person]);
  assert.equal(blind.update([{ ...person, c: 2 }])[0].track_id, idBlind);
  assert.notEqual(aware.update([{ ...person, c: 2 }])[0].track_id, idBlind);
});

test('tentative tracks carry no id until minHits; ids are consecutive from 1', () => {
  const t = new ByteTracker({ minHits: 3 });
  const a = (x: number): Detection => ({ c: 0, p: 0.9, b: [x, 100, x + 40, 220] });
  const b = (x: number): Detection => ({ c: 0, p: 0.9, b: [x, 300, x + 40, 420] });
  assert.equal(t.update([a(0), b(400)])[0].track_id, undefined);
  assert.equal(t.update([a(3), b(397)])[1].track_id, undefined);
  const third = t.update([a(6), b(394)]);
  assert.deepEqual(
    third.map((d) => d.track_id),
    [1, 2],
  );
  assert.deepEqual(
    t.update([a(9), b(391)]).map((d) => d.track_id),
    [1, 2],
  );
  // A single false positive never gets an id and its tentative track dies with the next miss.
  const fp = t.update([a(12), b(388), { c: 0, p: 0.9, b: [300, 500, 330, 560] }]);
  assert.equal(fp[2].track_id, undefined);
  t.update([a(15), b(385)]);
  assert.equal(t.snapshot().filter((s) => s.state === 'tentative').length, 0);
});

test('a low-confidence detection keeps a confirmed track alive; it cannot start one', () => {
  const t = new ByteTracker({ minHits: 1 });
  const id = t.update([{ c: 0, p: 0.9, b: [0, 0, 40, 120] }])[0].track_id!;
  const weak = t.update([{ c: 0, p: 0.3, b: [2, 0, 42, 120] }]);
  assert.equal(weak[0].track_id, id);
  assert.equal(t.snapshot()[0].state, 'confirmed');
  const alone = new ByteTracker({ minHits: 1 }).update([{ c: 0, p: 0.3, b: [0, 0, 40, 120] }]);
  assert.equal(alone[0].track_id, undefined);
  // Below lowThreshold a detection is ignored but still passed through, untouched but for track_id.
  const ignored = t.update([{ c: 0, p: 0.05, b: [4, 0, 44, 120], extra: 'kept' }]);
  assert.deepEqual(ignored, [{ c: 0, p: 0.05, b: [4, 0, 44, 120], extra: 'kept' }]);
});

test('output keeps every detection in order and every other field', () => {
  const t = new ByteTracker({ minHits: 1 });
  const dets: Detection[] = [
    { c: 0, p: 0.9, b: [0, 0, 10, 30, 0.5], x: 1 },
    { c: 2, p: 0.02, b: [50, 50, 90, 80], track_id: 99 },
  ];
  const out = t.update(dets);
  assert.equal(out.length, 2);
  assert.deepEqual(out[0], { ...dets[0], track_id: 1 });
  // A stale track_id from upstream is removed rather than published as if it were ours.
  assert.deepEqual(out[1], { c: 2, p: 0.02, b: [50, 50, 90, 80] });
  assert.equal(dets[1].track_id, 99, 'the input is not mutated');
});

test('bad input is refused with a typed error and changes nothing', () => {
  const t = new ByteTracker({ minHits: 1 });
  t.update([{ c: 0, p: 0.9, b: [0, 0, 10, 30] }]);
  const before = JSON.stringify(t.snapshot());
  assert.throws(
    () =>
      t.update([
        { c: 0, p: 0.9, b: [0, 0, 10, 30] },
        { c: 0, p: 0.9, b: [0, NaN, 10, 30] },
      ]),
    (e) => isLookoutError(e, 'message_invalid') && /detection 1/.test(e.message),
  );
  assert.throws(
    () => t.update([{ c: 0, p: 0.9, b: [0, 0, 10] }]),
    (e) => isLookoutError(e, 'message_invalid'),
  );
  assert.throws(
    () => t.update([], { dt: 0 }),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.equal(JSON.stringify(t.snapshot()), before);
  assert.equal(t.frameCount, 1);
  assert.throws(
    () => new ByteTracker({ minHits: 0 }),
    (e) => isLookoutError(e, 'config_invalid') && /minHits/.test(e.message),
  );
  assert.throws(
    () => new ByteTracker({ lowThreshold: 0.7 }),
    (e) => isLookoutError(e, 'config_invalid') && /lowThreshold/.test(e.message),
  );
  assert.throws(
    () => new ByteTracker({ nope: 1 } as never),
    (e) => isLookoutError(e, 'config_invalid'),
  );
});

test('skipped frames (dt > 1) keep a fast mover matched', () => {
  const t = new ByteTracker({ minHits: 1 });
  const at = (f: number): Detection => ({ c: 0, p: 0.9, b: [10 * f, 0, 10 * f + 30, 90] });
  let id = 0;
  for (let f = 0; f < 10; f++) id = t.update([at(f)])[0].track_id!;
  // Four frames' worth of motion (40 px on a 30 px box): IoU with the last box is 0; the prediction needs dt.
  assert.equal(t.update([at(14)], { dt: 4 })[0].track_id, id);
});

test('a tiny jittery object (a knife, 30x5 px) keeps one id thanks to the minimum match size', () => {
  const idsWith = (minMatchSize: number): Set<number> => {
    const rnd = seededRandom(9);
    const t = new ByteTracker({ minMatchSize });
    const ids = new Set<number>();
    for (let f = 0; f < 60; f++) {
      const j = () => rnd.gaussian(0, 2);
      const x = 100 + 3 * f;
      const out = t.update([{ c: 11, p: 0.8, b: [x + j(), 300 + j(), x + 30 + j(), 305 + j()] }]);
      if (out[0].track_id !== undefined) ids.add(out[0].track_id);
    }
    return ids;
  };
  assert.equal(idsWith(16).size, 1);
  assert.ok(idsWith(0).size > 1, 'plain IoU loses the knife again and again');
});

test('a gap longer than the lost buffer ends tracks; ids are never reused', () => {
  const t = new ByteTracker({ minHits: 1, lostBufferFrames: 30 });
  const det: Detection = { c: 0, p: 0.9, b: [100, 100, 140, 220] };
  assert.equal(t.update([det])[0].track_id, 1);
  // Standing still through a 30-frame gap: still the same track.
  assert.equal(t.update([det], { dt: 31 })[0].track_id, 1);
  // 40 frames (the detector was suspended): a new track, with a new id.
  assert.equal(t.update([det], { dt: 41 })[0].track_id, 2);
  assert.equal(t.snapshot().length, 1);
});

test('reset forgets tracks and restarts ids', () => {
  const t = new ByteTracker({ minHits: 1 });
  t.update([
    { c: 0, p: 0.9, b: [0, 0, 10, 30] },
    { c: 0, p: 0.9, b: [100, 0, 110, 30] },
  ]);
  t.reset();
  assert.equal(t.snapshot().length, 0);
  assert.equal(t.update([{ c: 0, p: 0.9, b: [0, 0, 10, 30] }])[0].track_id, 1);
});

test('on a noisy crowd the tracker beats the greedy IoU baseline on identity', () => {
  const truth = renderTruth(crowdScene(10, 120, 7));
  const dets = detectScene(truth, 11);
  const score = (tracker: MultiObjectTracker) =>
    evaluateMot(run(tracker, dets).map((out, f) => ({ truth: truth[f].truth, hypotheses: hypothesesFromDetections(out) })));
  const byte = score(new ByteTracker());
  const greedy = score(new GreedyIouTracker());
  assert.ok(byte.idf1 > greedy.idf1, `IDF1 byte ${byte.idf1.toFixed(3)} vs greedy ${greedy.idf1.toFixed(3)}`);
  assert.ok(byte.idSwitches <= greedy.idSwitches, `switches byte ${byte.idSwitches} vs greedy ${greedy.idSwitches}`);
});

test('greedy IoU baseline: ids at once, kept on overlap, validated options', () => {
  const g = new GreedyIouTracker();
  assert.equal(g.update([{ c: 0, p: 0.9, b: [0, 0, 10, 30] }])[0].track_id, 1);
  assert.equal(g.update([{ c: 0, p: 0.9, b: [1, 0, 11, 30] }])[0].track_id, 1);
  assert.equal(g.update([{ c: 2, p: 0.9, b: [1, 0, 11, 30] }])[0].track_id, 2);
  assert.throws(
    () => new GreedyIouTracker({ minIou: 2 }),
    (e) => isLookoutError(e, 'config_invalid'),
  );
});
