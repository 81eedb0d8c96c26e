import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadStore } from '../../../../../plugins/trocr/src/cascade/read-store.js';
import type { OcrRead } from '../../../../../plugins/trocr/src/service.js';

let n = 0;
function read(track: number | null, confidence: number): OcrRead {
  n++;
  return {
    type: 'ocr',
    timestamp: new Date(1_700_000_000_000 + n).toISOString(),
    read_id: `r-${n}`,
    frame_time: new Date(1_700_000_000_000).toISOString(),
    frame_index: n,
    track_id: track,
    class_id: 14,
    class_label: 'license_plate',
    det: { c: 14, p: 0.9, b: [0, 0, 10, 10] },
    crop: { x: 0, y: 0, width: 10, height: 10 },
    token_ids: [4, 5],
    stop: 'eos',
    confidence,
    steps: 3,
    encoder_ms: 1,
    decoder_ms: 1,
    decoder_ms_per_token: 0.3,
  };
}

test('reads of one track are merged: the most confident stays, the track seen last comes first', () => {
  const store = new ReadStore(32, 64);
  const a1 = read(1, 0.5);
  const a2 = read(1, 0.9);
  const b = read(2, 0.4);
  const a3 = read(1, 0.7);
  for (const r of [a1, a2, b, a3]) store.add(r);
  assert.deepEqual(
    store.bestByTrack().map((r) => r.read_id),
    [a2.read_id, b.read_id],
  );
  assert.deepEqual(
    store.recentReads().map((r) => r.read_id),
    [a3.read_id, b.read_id, a2.read_id, a1.read_id],
  );
});

test('reads without a track are recent reads only; both lists are bounded', () => {
  const store = new ReadStore(3, 2);
  store.add(read(null, 0.9));
  assert.deepEqual(store.bestByTrack(), []);
  for (const t of [1, 2, 3]) store.add(read(t, 0.5));
  assert.equal(store.recentReads().length, 3);
  assert.deepEqual(
    store.bestByTrack().map((r) => r.track_id),
    [3, 2],
  );
});
