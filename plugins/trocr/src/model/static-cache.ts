import { TROCR } from './trocr-contract.js';

const HEAD_BLOCK_OUT = (TROCR.SELF_CACHE_LEN + 1) * TROCR.HEAD_DIM;
const HEAD_BLOCK_IN = TROCR.SELF_CACHE_LEN * TROCR.HEAD_DIM;

/** A self-attention cache as the decoder takes it: [1, 8, 19, 32], zero (every slot empty) at the first step. */
export function emptySelfCache(): Float32Array {
  return new Float32Array(TROCR.HEADS * HEAD_BLOCK_IN);
}

/**
 * The decoder's present [1, 8, 20, 32] (its 19 input slots and this step's entry last) shifted back
 * to the [1, 8, 19, 32] it takes next: slot 0 of every head is dropped, slots 1..19 become 0..18. The
 * window stays right-aligned, so the live entries are always the last `step + 1` slots.
 */
export function shiftSelfCache(present: Float32Array, into: Float32Array): Float32Array {
  if (present.length !== TROCR.HEADS * HEAD_BLOCK_OUT || into.length !== TROCR.HEADS * HEAD_BLOCK_IN) {
    throw new RangeError(`self-attention cache: present has ${present.length} values (expected ${TROCR.HEADS * HEAD_BLOCK_OUT}), past ${into.length}`);
  }
  for (let h = 0; h < TROCR.HEADS; h++) {
    const from = h * HEAD_BLOCK_OUT + TROCR.HEAD_DIM;
    into.set(present.subarray(from, from + HEAD_BLOCK_IN), h * HEAD_BLOCK_IN);
  }
  return into;
}
