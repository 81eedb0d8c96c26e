import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptySelfCache, shiftSelfCache } from '../../../../../plugins/trocr/src/model/static-cache.js';
import { TROCR } from '../../../../../plugins/trocr/src/model/trocr-contract.js';

const { HEADS, HEAD_DIM, SELF_CACHE_LEN } = TROCR;

/** present[h][slot][d] = h * 10000 + slot * 100 + d: every value says where it came from. */
function labelledPresent(): Float32Array {
  const out = new Float32Array(HEADS * (SELF_CACHE_LEN + 1) * HEAD_DIM);
  for (let h = 0; h < HEADS; h++)
    for (let s = 0; s <= SELF_CACHE_LEN; s++) for (let d = 0; d < HEAD_DIM; d++) out[(h * (SELF_CACHE_LEN + 1) + s) * HEAD_DIM + d] = h * 10000 + s * 100 + d;
  return out;
}

test('the cache shape is the spec’s: (1, 8, 19, 32) in, empty at the first step', () => {
  const cache = emptySelfCache();
  assert.equal(cache.length, 1 * 8 * 19 * 32);
  assert.ok(cache.every((v) => v === 0));
});

test('20 out is shifted back to 19: slot 0 of every head dropped, slots 1..19 become 0..18, the new entry last', () => {
  const past = shiftSelfCache(labelledPresent(), emptySelfCache());
  for (let h = 0; h < HEADS; h++) {
    for (let s = 0; s < SELF_CACHE_LEN; s++) {
      for (let d = 0; d < HEAD_DIM; d++)
        assert.equal(past[(h * SELF_CACHE_LEN + s) * HEAD_DIM + d], h * 10000 + (s + 1) * 100 + d, `head ${h} slot ${s} dim ${d}`);
    }
  }
});

test('a present or past of another size is refused, naming the sizes', () => {
  assert.throws(() => shiftSelfCache(new Float32Array(8 * 19 * 32), emptySelfCache()), /present has 4864 values \(expected 5120\)/);
  assert.throws(() => shiftSelfCache(labelledPresent(), new Float32Array(10)), RangeError);
});
