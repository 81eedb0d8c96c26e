import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceReads } from '../../../../../hub/plugins/ocr-text/src/device-reads.js';
import { mergeByTrack } from '../../../../../hub/plugins/ocr-text/src/merge-reads.js';
import type { OcrRead } from '../../../../../plugins/trocr/src/service.js';

function read(id: string, track: number | null, confidence: number, second: number): OcrRead {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
  return {
    type: 'ocr',
    timestamp: at,
    read_id: id,
    frame_time: at,
    frame_index: second,
    track_id: track,
    class_id: 14,
    class_label: 'license_plate',
    det: { c: 14, p: 0.8, b: [1, 2, 30, 12] },
    crop: { x: 1, y: 2, width: 29, height: 10 },
    token_ids: [4],
    stop: 'eos',
    confidence,
    steps: 2,
    encoder_ms: 3,
    decoder_ms: 2,
    decoder_ms_per_token: 1,
  };
}

test('reads of one track merge to the most confident; a read seen twice counts once; newest track first', () => {
  const merged = mergeByTrack([
    read('a', 7, 0.4, 1),
    read('b', 7, 0.9, 2),
    read('c', 7, 0.6, 5),
    read('b', 7, 0.9, 2),
    read('d', null, 0.3, 3),
    read('e', 8, 0.5, 4),
  ]);
  assert.deepEqual(
    merged.map((m) => [m.read.read_id, m.reads_merged, m.last_read_at.slice(17, 19)]),
    [
      ['b', 3, '05'],
      ['e', 1, '04'],
      ['d', 1, '03'],
    ],
  );
});

test('equal confidence keeps the newer read', () => {
  assert.equal(mergeByTrack([read('old', 1, 0.5, 1), read('new', 1, 0.5, 2)])[0].read.read_id, 'new');
});

test('the hub keeps the newest reads per device from the bus, for a bounded number of devices, and counts what is not a read', () => {
  const reads = new DeviceReads(2, 2);
  assert.equal(reads.add('p1', read('a', 1, 0.5, 1)), true);
  reads.add('p1', read('b', 1, 0.5, 2));
  reads.add('p1', read('c', 1, 0.5, 3));
  assert.deepEqual(
    reads.of('p1').map((r) => r.read_id),
    ['c', 'b'],
  );
  assert.equal(reads.add('p1', { type: 'ocr', timestamp: new Date().toISOString() }), false);
  assert.equal(reads.refused, 1);
  reads.add('p2', read('x', null, 0.5, 1));
  reads.add('p3', read('y', null, 0.5, 1));
  assert.deepEqual(reads.of('p1'), [], 'the device heard from longest ago left');
  assert.equal(reads.of('p3').length, 1);
});
