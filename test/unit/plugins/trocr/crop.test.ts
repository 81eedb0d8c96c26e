/**
 * The crops the cascade reads (core's CropResizer as the worker runs it, native or its twin): 384 ×
 * 384, RGB planes in 0..1 from the BGR frame, taken from the box's own pixels.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CropResizer } from '../../../../native/ts/crop-resizer.js';
import { TROCR } from '../../../../plugins/trocr/src/model/trocr-contract.js';

const W = 640;
const H = 480;
const SIDE = TROCR.CROP_SIZE;
const PLANE = SIDE * SIDE;

/** A grey frame with two solid blocks, BGR888: a plate-coloured one and a two-colour sign. */
function frame(): Uint8Array {
  const data = new Uint8Array(W * H * 3).fill(128);
  const paint = (x0: number, y0: number, x1: number, y1: number, bgr: [number, number, number]) => {
    for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) data.set(bgr, (y * W + x) * 3);
  };
  paint(100, 200, 180, 230, [10, 60, 250]); // B 10, G 60, R 250
  paint(400, 50, 440, 130, [255, 0, 0]); // left half blue
  paint(440, 50, 480, 130, [0, 255, 0]); // right half green
  return data;
}

for (const implementation of ['native', 'typescript'] as const) {
  test(`crops are 384 x 384 RGB in 0..1 from the BGR frame, on the box's pixels (${implementation})`, (t) => {
    const resizer = new CropResizer({ size: SIDE, ...(implementation === 'typescript' ? { addon: null } : {}) });
    if (resizer.implementation !== implementation) {
      // The addon did not build here; its twin is what runs, and is tested in the other case.
      assert.equal(implementation, 'native');
      t.diagnostic(`native addon not loaded: ${resizer.implementation} only`);
      return;
    }
    const { tensor, rects } = resizer.run({ width: W, height: H, data: frame() }, [
      [100, 200, 180, 230],
      [400, 50, 480, 130],
    ]);
    assert.equal(tensor.length, 2 * 3 * PLANE, 'two crops of [3, 384, 384]');
    assert.deepEqual(rects, [
      { x: 100, y: 200, width: 80, height: 30 },
      { x: 400, y: 50, width: 80, height: 80 },
    ]);
    for (const v of tensor) assert.ok(v >= 0 && v <= 1, `value ${v} outside 0..1`);
    const plate = (c: number) => tensor.subarray(c * PLANE, (c + 1) * PLANE);
    // R, G, B planes in that order: the frame's BGR reversed, divided by 255; the whole crop is the block.
    for (const [c, value] of [
      [0, 250],
      [1, 60],
      [2, 10],
    ] as const) {
      for (const v of plate(c)) assert.ok(Math.abs(v - value / 255) < 1e-6, `plane ${c}: ${v}`);
    }
    const sign = tensor.subarray(3 * PLANE);
    const at = (c: number, x: number, y: number) => sign[c * PLANE + y * SIDE + x];
    // The left half of the sign crop is the blue block, the right half the green one.
    assert.ok(Math.abs(at(2, 10, 192) - 1) < 1e-6 && at(1, 10, 192) < 1e-6 && at(0, 10, 192) < 1e-6, 'left: blue');
    assert.ok(Math.abs(at(1, 373, 192) - 1) < 1e-6 && at(2, 373, 192) < 1e-6 && at(0, 373, 192) < 1e-6, 'right: green');
  });
}
