import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boxOnPicture, DEFAULT_DETECTOR_FRAME, detectorFrameOf } from '../../../../core/src/contracts/detection-frame.js';
import { DetsMessageSchema } from '../../../../core/src/contracts/dets-message.js';

test('a box goes onto a picture by scaling each axis on its own: the picture is the detector frame, stretched', () => {
  const frame = { width: 640, height: 640 };
  assert.deepEqual(boxOnPicture([64, 320, 128, 640], frame, { width: 480, height: 270 }), [48, 135, 96, 270]);
  assert.deepEqual(
    boxOnPicture([0, 0, 640, 640], frame, { width: 1920, height: 1080 }),
    [0, 0, 1920, 1080],
    'the whole frame is the whole picture: no letterbox',
  );
  // A frame of another size (a sim or substream that is not 640×640) scales from its own size.
  assert.deepEqual(
    boxOnPicture([160, 120, 320, 240, 0.5], { width: 320, height: 240 }, { width: 640, height: 360 }),
    [320, 180, 640, 360],
    'numbers after the fourth are ignored',
  );
  assert.throws(() => boxOnPicture([1, 2, 3], frame, frame), RangeError);
});

test('the frame the boxes are in: the dets message says it, else the 640×640 substream', () => {
  assert.deepEqual(detectorFrameOf({ frame_width: 1280, frame_height: 720 }), { width: 1280, height: 720 });
  assert.deepEqual(detectorFrameOf({}), DEFAULT_DETECTOR_FRAME);
  assert.deepEqual(detectorFrameOf({ frame_width: 0, frame_height: 720 }), DEFAULT_DETECTOR_FRAME);
  assert.deepEqual(detectorFrameOf({ frame_width: '640', frame_height: 640 }), DEFAULT_DETECTOR_FRAME);
});

test('dets messages may carry captured_at and the frame size; a bad value is refused, their absence is fine', () => {
  const base = { timestamp: '2026-11-26T10:00:00.000Z', camera_id: 'front_door', dets: [], person_count: 0, rf_detr_precomputed: true };
  assert.ok(DetsMessageSchema.safeParse(base).success);
  assert.ok(DetsMessageSchema.safeParse({ ...base, captured_at: '2026-11-26T09:59:59.950Z', frame_width: 640, frame_height: 640 }).success);
  assert.ok(!DetsMessageSchema.safeParse({ ...base, frame_width: -1 }).success);
  assert.ok(!DetsMessageSchema.safeParse({ ...base, captured_at: 'yesterday' }).success);
});
