/**
 * The read contract the hub stores from the bus: unknown keys are stripped (a padded read keeps its
 * size only in what is known), det.b is exactly four numbers, and every string and array is bounded,
 * so a huge read is refused rather than kept.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OcrReadSchema, OcrStatusSchema, type OcrRead } from '../../../../plugins/trocr/src/service.js';

const PAD = 'x'.repeat(250_000);

function read(): OcrRead {
  return {
    type: 'ocr',
    timestamp: '2030-01-01T00:00:01.000Z',
    read_id: 'boot-1',
    frame_time: '2030-01-01T00:00:00.900Z',
    frame_index: 1,
    track_id: 7,
    class_id: 14,
    class_label: 'license_plate',
    det: { c: 14, p: 0.8, b: [10, 20, 90, 40] },
    crop: { x: 10, y: 20, width: 80, height: 20 },
    token_ids: [4, 5],
    stop: 'eos',
    confidence: 0.7,
    steps: 3,
    encoder_ms: 5,
    decoder_ms: 4,
    decoder_ms_per_token: 1.3,
  };
}

test('a padded read is stripped to the contract: unknown keys at the top and in det are dropped', () => {
  const padded = { ...read(), pad: PAD, extra: { more: PAD }, det: { ...read().det, pad: PAD } };
  const parsed = OcrReadSchema.parse(padded);
  assert.deepEqual(parsed, read());
  assert.ok(JSON.stringify(parsed).length < 1000, `${JSON.stringify(parsed).length} characters kept`);
});

test('det.b is exactly four numbers: a huge box array, a short one and a long one are refused', () => {
  for (const b of [Array.from({ length: 60_000 }, (_, i) => i), [1, 2, 3], [1, 2, 3, 4, 5]]) {
    const r = OcrReadSchema.safeParse({ ...read(), det: { c: 14, p: 0.8, b } });
    assert.equal(r.success, false, `b of ${b.length}`);
    assert.deepEqual(r.error?.issues[0]?.path, ['det', 'b']);
  }
});

test('strings and arrays are bounded: timestamps with endless fraction digits, long read ids and token lists are refused', () => {
  const refusedAt = (change: Partial<Record<keyof OcrRead, unknown>>, path: string) => {
    const r = OcrReadSchema.safeParse({ ...read(), ...change });
    assert.equal(r.success, false, path);
    assert.equal(r.error?.issues[0]?.path.join('.'), path);
  };
  const longTime = `2030-01-01T00:00:01.${'1'.repeat(100_000)}Z`;
  refusedAt({ timestamp: longTime }, 'timestamp');
  refusedAt({ frame_time: longTime }, 'frame_time');
  refusedAt({ read_id: 'r'.repeat(65) }, 'read_id');
  refusedAt({ token_ids: Array.from({ length: 21 }, () => 4) }, 'token_ids');
  // The longest timestamp a writer makes (nanoseconds and an explicit zero offset) still passes.
  assert.equal(OcrReadSchema.safeParse({ ...read(), timestamp: '2030-01-01T00:00:01.123456789+00:00' }).success, true);
});

test('a status lists a bounded number of reads', () => {
  const field = OcrStatusSchema.shape.recent_reads;
  assert.equal(field.safeParse(Array.from({ length: 256 }, read)).success, true);
  assert.equal(field.safeParse(Array.from({ length: 257 }, read)).success, false);
  assert.equal(OcrStatusSchema.shape.best_by_track.safeParse(Array.from({ length: 257 }, read)).success, false);
});
