/**
 * The load check against the contract, on generated graphs that onnxruntime really loads: the
 * spec's pair fits; each way of breaking it is named.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import { ioMismatches } from '../../../../../plugins/trocr/src/model/check-io.js';
import { DECODER_IO, ENCODER_IO } from '../../../../../plugins/trocr/src/model/trocr-contract.js';
import { buildTrocrPair, type TrocrModelSpec } from '../../../../support/trocr-onnx-model.js';

async function mismatches(spec: TrocrModelSpec): Promise<string[]> {
  const pair = buildTrocrPair(spec);
  const [encoder, decoder] = await Promise.all([ort.InferenceSession.create(pair.encoder), ort.InferenceSession.create(pair.decoder)]);
  try {
    return [
      ...ioMismatches('encoder', { inputs: encoder.inputMetadata, outputs: encoder.outputMetadata }, ENCODER_IO),
      ...ioMismatches('decoder', { inputs: decoder.inputMetadata, outputs: decoder.outputMetadata }, DECODER_IO),
    ];
  } finally {
    await Promise.all([encoder.release(), decoder.release()]);
  }
}

describe('trocr: I/O names and shapes checked at load', () => {
  it('the spec’s pair fits: pixel_values [1,3,384,384]; caches (1,8,19,32) in, 20 out, (1,8,578,32) cross, 6 layers', async () => {
    assert.deepEqual(await mismatches({}), []);
    assert.equal(DECODER_IO.inputs.length, 2 + 6 * 4);
    assert.equal(DECODER_IO.outputs.length, 1 + 6 * 2);
    assert.equal(ENCODER_IO.outputs.length, 6 * 2);
  });

  it('int32 ids and positions are accepted; float ids are not', async () => {
    assert.deepEqual(await mismatches({ indexType: 'int32' }), []);
    const found = await mismatches({ indexType: 'float32' });
    assert.ok(found.includes('decoder input input_ids is float32, expected int64 or int32'), found.join('\n'));
    assert.ok(found.includes('decoder input cache_position is float32, expected int64 or int32'), found.join('\n'));
  });

  it('a 320 encoder is refused as the spec says: its input and every cross cache named', async () => {
    const found = await mismatches({ inputSize: 320 });
    assert.ok(
      found.includes("encoder input pixel_values is [1, 3, 320, 320], the spec's is [1, 3, 384, 384] (320 is wrong: the crop is 384 × 384)"),
      found.join('\n'),
    );
    assert.ok(found.includes("encoder output present.0.encoder.key is [1, 8, 402, 32], the spec's is [1, 8, 578, 32]"), found.join('\n'));
    assert.equal(found.filter((m) => m.includes('[1, 8, 402, 32]')).length, 12, 'key and value of 6 layers');
  });

  it('another self-attention cache length is named for every input and output', async () => {
    const found = await mismatches({ selfCacheLen: 20 });
    assert.ok(found.includes("decoder input past_key_values.3.decoder.value is [1, 8, 20, 32], the spec's is [1, 8, 19, 32]"), found.join('\n'));
    assert.ok(found.includes("decoder output present.5.decoder.key is [1, 8, 21, 32], the spec's is [1, 8, 20, 32]"), found.join('\n'));
    assert.equal(found.length, 24);
  });

  it('a renamed input is named twice: the one missing and the one the host would not feed', async () => {
    const found = await mismatches({ inputIdsName: 'decoder_input_ids' });
    assert.deepEqual(found, ['decoder has no input input_ids', 'decoder takes an input the contract does not feed: decoder_input_ids']);
  });

  it('symbolic dimensions pass; a vocabulary no larger than the special ids does not', () => {
    const fits = ioMismatches(
      'decoder',
      {
        inputs: DECODER_IO.inputs.map((s) => ({ name: s.name, isTensor: true, type: s.types[0], shape: s.shape.map((d, i) => (i === 0 ? 'batch' : d)) })),
        outputs: DECODER_IO.outputs.map((s) => ({ name: s.name, isTensor: true, type: 'float32', shape: s.shape.map((d) => (d === 'vocab' ? 2 : d)) })),
      },
      DECODER_IO,
    );
    assert.deepEqual(fits, ["decoder output logits is [1, 1, 2], the spec's is [1, 1, vocab]"]);
  });
});
