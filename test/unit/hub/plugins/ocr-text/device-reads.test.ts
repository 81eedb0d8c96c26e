/**
 * What the hub keeps of the reads devices publish on events/ocr: only the fields GET /fleet/ocr
 * uses, so a padded read costs what an honest one does, and a huge one is refused and counted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceReads } from '../../../../../hub/plugins/ocr-text/src/device-reads.js';
import type { OcrRead } from '../../../../../plugins/trocr/src/service.js';

const PAD = 'x'.repeat(250_000);
const ROUTE_FIELDS = ['class_id', 'class_label', 'confidence', 'det', 'frame_time', 'read_id', 'stop', 'timestamp', 'token_ids', 'track_id'];

function read(n: number): OcrRead {
  const at = new Date(Date.UTC(2030, 0, 1, 0, 0, 0, n)).toISOString();
  return {
    type: 'ocr',
    timestamp: at,
    read_id: `boot-${n}`,
    frame_time: at,
    frame_index: n,
    track_id: n,
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

test('a padded read is kept as the route’s fields only: no unknown keys, no crop or timings, det as c, p and b', () => {
  const reads = new DeviceReads(256, 4);
  for (let n = 0; n < 256; n++) {
    const padded = { ...read(n), pad: PAD, det: { ...read(n).det, pad: PAD } };
    assert.equal(reads.add('p1', padded), true);
  }
  const kept = reads.of('p1');
  assert.equal(kept.length, 256);
  assert.deepEqual(Object.keys(kept[0]).sort(), ROUTE_FIELDS);
  assert.deepEqual(kept[0].det, { c: 14, p: 0.8, b: [10, 20, 90, 40] });
  const size = JSON.stringify(kept).length;
  assert.ok(size < 256 * 400, `256 padded reads keep ${size} characters`);
});

test('a read with a huge box array is refused and counted, not kept', () => {
  const reads = new DeviceReads(256, 4);
  const huge = { ...read(1), det: { c: 14, p: 0.8, b: Array.from({ length: 60_000 }, (_, i) => i) } };
  assert.equal(reads.add('p1', huge), false);
  assert.equal(reads.add('p1', { ...read(2), timestamp: `2030-01-01T00:00:00.${'1'.repeat(250_000)}Z` }), false);
  assert.equal(reads.refused, 2);
  assert.deepEqual(reads.of('p1'), []);
});
