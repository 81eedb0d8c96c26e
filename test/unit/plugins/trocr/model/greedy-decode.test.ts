/**
 * The decoder loop against a generated TrOCR pair of the exact spec signatures: where it stops, and
 * the proof that the static-cache shifting is right: step by step with the caches, it reads exactly
 * the tokens that a greedy decode of the same weights over the whole sequence, without any cache,
 * reads (and a wrong shift does not).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { argmaxWithLogProbability, greedyDecode, type DecoderRun } from '../../../../../plugins/trocr/src/model/greedy-decode.js';
import { TROCR } from '../../../../../plugins/trocr/src/model/trocr-contract.js';
import { buildTrocrPair, type TrocrModelSpec } from '../../../../support/trocr-onnx-model.js';
import { seededRandom } from '../../../../support/onnx-model.js';

interface Sessions {
  encoder: ort.InferenceSession;
  decoder: ort.InferenceSession;
  full: ort.InferenceSession;
  release(): Promise<void>;
}

async function sessions(spec: TrocrModelSpec): Promise<Sessions> {
  const pair = buildTrocrPair(spec);
  const options: ort.InferenceSession.SessionOptions = { executionProviders: ['cpu'], intraOpNumThreads: 1 };
  const [encoder, decoder, full] = await Promise.all([
    ort.InferenceSession.create(pair.encoder, options),
    ort.InferenceSession.create(pair.decoder, options),
    ort.InferenceSession.create(pair.fullDecoder, options),
  ]);
  return { encoder, decoder, full, release: async () => void (await Promise.all([encoder.release(), decoder.release(), full.release()])) };
}

/** A crop: seeded values in 0..1 with some structure, so that different seeds are different pictures. */
function crop(seed: number): Float32Array {
  const rnd = seededRandom(seed);
  const side = TROCR.CROP_SIZE;
  const out = new Float32Array(3 * side * side);
  for (let c = 0; c < 3; c++) {
    const phase = rnd() * 6;
    for (let y = 0; y < side; y++)
      for (let x = 0; x < side; x++) out[c * side * side + y * side + x] = 0.5 + 0.4 * Math.sin(phase + (x * (c + 1) + y) / 23) * rnd();
  }
  return out;
}

async function encode(s: Sessions, pixels: Float32Array): Promise<Record<string, ort.Tensor>> {
  return s.encoder.run({ pixel_values: new ort.Tensor('float32', pixels, [1, 3, TROCR.CROP_SIZE, TROCR.CROP_SIZE]) });
}

/**
 * The reference: greedy over the full-sequence graph, which recomputes every position from the
 * whole prefix at each step (a causal mask, no cache of any kind). Returns the tokens before EOS and
 * each step's logits.
 */
async function referenceDecode(s: Sessions, cross: Record<string, ort.Tensor>): Promise<{ tokens: number[]; logits: Float32Array[] }> {
  const feeds: Record<string, ort.Tensor> = {};
  for (const [name, t] of Object.entries(cross)) feeds[name.replace(/^present\./, 'past_key_values.')] = t;
  const ids: number[] = [TROCR.START];
  const logits: Float32Array[] = [];
  for (let step = 0; step < TROCR.MAX_SEQ_LEN; step++) {
    feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(ids.map((i) => BigInt(i))), [1, ids.length]);
    const out = await s.full.run(feeds);
    const vocab = out.logits.dims[2];
    const last = (out.logits.data as Float32Array).slice(step * vocab, (step + 1) * vocab);
    logits.push(last);
    const next = argmaxWithLogProbability(last).id;
    if (next === TROCR.EOS) break;
    ids.push(next);
  }
  return { tokens: ids.slice(1), logits };
}

/** The step decoder with a recorder of each step's logits, and a way to corrupt its caches. */
function recordingRun(s: Sessions, logits: Float32Array[], corrupt?: (present: Float32Array) => Float32Array): DecoderRun {
  return async (feeds) => {
    const out = (await s.decoder.run(feeds)) as Record<string, ort.Tensor>;
    logits.push((out.logits.data as Float32Array).slice());
    if (corrupt) {
      for (const [name, t] of Object.entries(out)) {
        if (name.endsWith('.decoder.key') || name.endsWith('.decoder.value')) out[name] = new ort.Tensor('float32', corrupt(t.data as Float32Array), t.dims);
      }
    }
    return out;
  };
}

const INT64 = { idsType: 'int64', positionType: 'int64' } as const;
const SLOT = TROCR.HEAD_DIM;
const HEAD_OUT = (TROCR.SELF_CACHE_LEN + 1) * SLOT;

describe('trocr: greedy decoding with static caches', () => {
  let open: Sessions;
  let eosAt5: Sessions;
  before(async () => {
    [open, eosAt5] = await Promise.all([sessions({ seed: 11 }), sessions({ seed: 11, eosAtStep: 5 })]);
  });
  after(async () => {
    await open.release();
    await eosAt5.release();
  });

  it('stops at EOS: the tokens before it, EOS and START left out', async () => {
    const read = await greedyDecode((f) => eosAt5.decoder.run(f), await encode(eosAt5, crop(1)), INT64);
    assert.equal(read.stop, 'eos');
    assert.equal(read.tokens.length, 5);
    assert.equal(read.steps, 6, 'five tokens and the step that gave EOS');
    assert.ok(
      read.tokens.every((t) => t > 3),
      `no special ids among ${read.tokens.join(',')}`,
    );
    assert.ok(read.confidence > 0 && read.confidence <= 1);
  });

  it('stops at 20 tokens when EOS never comes: the caches hold no more positions', async () => {
    const read = await greedyDecode((f) => open.decoder.run(f), await encode(open, crop(1)), INT64);
    assert.equal(read.stop, 'max_tokens');
    assert.equal(read.tokens.length, TROCR.MAX_SEQ_LEN);
    assert.equal(read.steps, TROCR.MAX_SEQ_LEN);
  });

  it('reads exactly the tokens of a full-sequence decode computed without caches, step logits equal within float error', async () => {
    for (const seed of [1, 2, 3, 4]) {
      for (const s of [open, eosAt5]) {
        const cross = await encode(s, crop(seed));
        const stepLogits: Float32Array[] = [];
        const cached = await greedyDecode(recordingRun(s, stepLogits), cross, INT64);
        const reference = await referenceDecode(s, cross);
        assert.deepEqual(cached.tokens, reference.tokens, `crop ${seed}`);
        assert.equal(stepLogits.length, reference.logits.length);
        stepLogits.forEach((row, step) => {
          const worst = row.reduce((m, v, i) => Math.max(m, Math.abs(v - reference.logits[step][i])), 0);
          assert.ok(worst < 1e-3, `crop ${seed} step ${step}: logits differ by ${worst}`);
        });
      }
    }
  });

  it('makes the comparison meaningful: the context matters, and a wrong shift reads other tokens', async () => {
    const reads = await Promise.all(
      [1, 2, 3].map(async (seed) => (await greedyDecode((f) => open.decoder.run(f), await encode(open, crop(seed)), INT64)).tokens),
    );
    assert.ok(new Set(reads.map((r) => r.join(','))).size > 1, 'different crops read differently');
    assert.ok(
      reads.every((r) => new Set(r).size > 1),
      'a read is not one token repeated',
    );
    const cross = await encode(open, crop(2));
    const right = (await referenceDecode(open, cross)).tokens;
    // Dropping the newest entry instead of the oldest: the window loses what was just added.
    const dropNewest = (present: Float32Array) => {
      const out = new Float32Array(present.length);
      for (let h = 0; h < TROCR.HEADS; h++) out.set(present.subarray(h * HEAD_OUT, h * HEAD_OUT + HEAD_OUT - SLOT), h * HEAD_OUT + SLOT);
      return out;
    };
    // Never keeping anything: each step sees an empty past.
    const forget = (present: Float32Array) => new Float32Array(present.length);
    for (const corrupt of [dropNewest, forget]) {
      const wrong = await greedyDecode(recordingRun(open, [], corrupt), cross, INT64);
      assert.notDeepEqual(wrong.tokens, right, `${corrupt.name} must change the read`);
    }
  });

  it('takes int32 ids and positions when the export declares them', async () => {
    const s = await sessions({ seed: 11, eosAtStep: 5, indexType: 'int32' });
    try {
      const cross = await encode(s, crop(3));
      const read = await greedyDecode((f) => s.decoder.run(f), cross, { idsType: 'int32', positionType: 'int32' });
      assert.deepEqual(read.tokens, (await referenceDecode(s, cross)).tokens);
    } finally {
      await s.release();
    }
  });

  it('a decoder that throws mid-read rejects with its error (the recognizer reports it as TROCR_DLC_FW_CRASH)', async () => {
    const s = await sessions({ seed: 11, crashAtStep: 3 });
    try {
      await assert.rejects(
        greedyDecode((f) => s.decoder.run(f), await encode(s, crop(1)), INT64),
        /out of|bound|index/i,
      );
    } finally {
      await s.release();
    }
  });

  it('refuses non-finite logits as a broken graph, and takes the first of equal logits', () => {
    assert.throws(
      () => argmaxWithLogProbability(Float32Array.of(0, Number.NaN, 1), 4),
      (err) => isLookoutError(err, 'trocr.dlc_fw_crash') && /logit 1 is NaN at step 4/.test(err.message),
    );
    assert.equal(argmaxWithLogProbability(Float32Array.of(1, 3, 3)).id, 1);
    assert.ok(Math.abs(argmaxWithLogProbability(Float32Array.of(0, 0)).logProbability - Math.log(0.5)) < 1e-12);
  });
});
