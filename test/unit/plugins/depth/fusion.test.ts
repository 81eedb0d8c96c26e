import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LOWER_CENTRAL_REGION, backProject, fuseDetection, medianDepthInBox, scaleIntrinsics, type DepthMap } from '../../../../plugins/depth/src/fusion.js';
import { renderTruthDepthMap } from '../../../../plugins/depth/src/truth-depth.js';
import type { GroundTruthObject } from '../../../../plugins/camera/src/service.js';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';

const K = { fx: 500, fy: 500, cx: 320, cy: 320 };
const FRAME = { width: 640, height: 640 };
const near = (a: number, b: number, eps = 1e-9) => assert.ok(Math.abs(a - b) < eps, `${a} != ${b}`);

test('back-projection of the box centre through the pinhole model', () => {
  // Centre on the optical axis: straight ahead.
  assert.deepEqual(backProject([300, 300, 340, 340], 4, K), { x: 0, y: 0, z: 4 });
  // 100 px right and 50 px below the principal point at 5 m: 1 m right, 0.5 m below.
  const p = backProject([400, 340, 440, 400], 5, K);
  near(p.x, 1);
  near(p.y, 0.5);
  near(p.z, 5);
  // Left and above are negative.
  const q = backProject([100, 100, 140, 140], 2, { fx: 400, fy: 800, cx: 320, cy: 320 });
  near(q.x, ((120 - 320) * 2) / 400);
  near(q.y, ((120 - 320) * 2) / 800);
  // Projecting back gives the pixel again.
  near(K.fx * (p.x / p.z) + K.cx, 420);
  near(K.fy * (p.y / p.z) + K.cy, 370);
});

test('median of the lower-central region; holes ignored; even counts average', () => {
  const map: DepthMap = { width: 4, height: 4, data: new Float32Array(16).fill(9) };
  // Box is the whole 4x4 map; lower-central region = columns 1..2, rows 2..3 (centres 2.5, 3.5 < 3.6).
  const set = (x: number, y: number, v: number) => ((map.data as Float32Array)[y * 4 + x] = v);
  set(1, 2, 2);
  set(2, 2, 3);
  set(1, 3, 4);
  set(2, 3, NaN);
  assert.equal(medianDepthInBox(map, [0, 0, 4, 4], { width: 4, height: 4 }), 3);
  set(2, 3, 5);
  assert.equal(medianDepthInBox(map, [0, 0, 4, 4], { width: 4, height: 4 }), 3.5);
  // A region of holes only has no depth.
  for (const [x, y] of [
    [1, 2],
    [2, 2],
    [1, 3],
    [2, 3],
  ] as const)
    set(x, y, 0);
  assert.equal(medianDepthInBox(map, [0, 0, 4, 4], { width: 4, height: 4 }), undefined);
});

test('a low-resolution depth map is sampled where the box lies in it', () => {
  // 64x64 map for a 640x640 frame: left half at 3 m, right half at 8 m.
  const data = new Float32Array(64 * 64);
  for (let y = 0; y < 64; y++) for (let x = 0; x < 64; x++) data[y * 64 + x] = x < 32 ? 3 : 8;
  const map = { width: 64, height: 64, data };
  assert.equal(medianDepthInBox(map, [100, 200, 200, 500], FRAME), 3);
  assert.equal(medianDepthInBox(map, [400, 200, 500, 500], FRAME), 8);
  // A box far smaller than one map pixel still gets the pixel under it.
  assert.equal(medianDepthInBox(map, [401, 401, 402, 402], FRAME), 8);
  // Boxes partly outside are clipped to the frame first; wholly outside have no depth.
  assert.equal(medianDepthInBox(map, [600, 600, 700, 700], FRAME), 8);
  assert.equal(medianDepthInBox(map, [700, 700, 800, 800], FRAME), undefined);
});

test('the lower-central region ignores the background around a person', () => {
  // A person at 4 m drawn as a narrow torso and legs inside a wider box on a 20 m background.
  const map = renderTruthDepthMap([], FRAME, 20);
  const data = map.data as Float32Array;
  const box = [200, 100, 300, 400] as const;
  for (let y = 130; y < 400; y++) for (let x = 225; x < 275; x++) data[y * 640 + x] = 4;
  assert.equal(medianDepthInBox(map, box, FRAME), 4);
  // The whole box would mix in half background: the median then lands on the wrong side.
  assert.equal(medianDepthInBox(map, box, FRAME, { left: 0, right: 1, top: 0, bottom: 1 }), 20);
  assert.deepEqual(LOWER_CENTRAL_REGION, { left: 0.25, right: 0.75, top: 0.5, bottom: 0.9 });
});

test('truth depth map: nearer objects cover farther ones', () => {
  const g = (id: number, box: [number, number, number, number], depthM: number): GroundTruthObject => ({
    id,
    classId: 0,
    label: 'person',
    box,
    depthM,
    visibility: 1,
  });
  const far = g(1, [100, 100, 300, 500], 9);
  const nearOne = g(2, [150, 100, 350, 500], 5);
  const map = renderTruthDepthMap([nearOne, far], FRAME);
  assert.equal(medianDepthInBox(map, nearOne.box, FRAME), 5);
  // The farther person's lower-central region is mostly behind the nearer one.
  assert.equal(medianDepthInBox(map, far.box, FRAME), 5);
  assert.equal(medianDepthInBox(map, far.box, FRAME, { left: 0, right: 0.2, top: 0.5, bottom: 0.9 }), 9);
  assert.equal(medianDepthInBox(map, [500, 500, 600, 600], FRAME), 50);
});

test('fuseDetection adds x, y, z in metres, or nothing without depth', () => {
  const det = { c: 0, p: 0.9, b: [400, 340, 440, 400, 0.1], track_id: 3 };
  assert.deepEqual(fuseDetection(det, 5, K), { ...det, x: 1, y: 0.5, z: 5 });
  assert.deepEqual(fuseDetection({ ...det, x: 7, y: 7, z: 7 }, undefined, K), det, 'stale coordinates are not passed on');
  assert.deepEqual(fuseDetection(det, 0, K), det);
  assert.deepEqual(fuseDetection(det, NaN, K), det);
  const rounded = fuseDetection({ c: 0, p: 1, b: [321, 320, 322, 320] }, 3.3333333, K);
  assert.equal(rounded.z, 3.333);
  assert.equal(rounded.x, 0.01);
});

test('intrinsics scale with the resolution', () => {
  assert.deepEqual(scaleIntrinsics({ fx: 1000, fy: 1000, cx: 960, cy: 540 }, { width: 1920, height: 1080 }, { width: 640, height: 640 }), {
    fx: 1000 / 3,
    fy: 1000 * (640 / 1080),
    cx: 320,
    cy: 320,
  });
});

test('bad input is a typed error', () => {
  assert.throws(
    () => backProject([0, 0, 1, 1], -1, K),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.throws(
    () => backProject([0, 0, 1, 1], 1, { ...K, fx: 0 }),
    (e) => isLookoutError(e, 'config_invalid') && /fx/.test(e.message),
  );
  assert.throws(
    () => medianDepthInBox({ width: 2, height: 2, data: [1, 2, 3] }, [0, 0, 1, 1], FRAME),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.throws(
    () => medianDepthInBox({ width: 1, height: 1, data: [1] }, [0, NaN, 1, 1], FRAME),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
  assert.throws(
    () => scaleIntrinsics(K, { width: 0, height: 1 }, FRAME),
    (e) => isLookoutError(e, 'argument_invalid'),
  );
});
