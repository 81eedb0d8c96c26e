/**
 * The recognizer fails closed with the spec's TROCR_DLC_FW_CRASH: graphs that onnxruntime cannot
 * load, that do not fit the contract (each mismatch named), or that crash while reading.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { TextRecognizer } from '../../../../../plugins/trocr/src/model/text-recognizer.js';
import { TROCR } from '../../../../../plugins/trocr/src/model/trocr-contract.js';
import { buildTrocrPair, type TrocrModelSpec } from '../../../../support/trocr-onnx-model.js';

const NAMES = { encoderName: 'trocr_encoder.onnx', decoderName: 'trocr_decoder.onnx', threads: 1 };
const grey = () => new Float32Array(3 * TROCR.CROP_SIZE * TROCR.CROP_SIZE).fill(0.5);

function open(spec: TrocrModelSpec): Promise<TextRecognizer> {
  const pair = buildTrocrPair(spec);
  return TextRecognizer.open(pair.encoder, pair.decoder, NAMES);
}

function isCrash(pattern: RegExp) {
  return (err: unknown) => {
    assert.ok(isLookoutError(err, 'trocr.dlc_fw_crash'), String(err));
    assert.match(err.message, /^TROCR_DLC_FW_CRASH: /);
    assert.match(err.message, pattern);
    assert.equal((err.details as { load_report: string }).load_report, 'TROCR_DLC_FW_CRASH');
    return true;
  };
}

describe('trocr: the recognizer', () => {
  it('reads a crop: the encoder once, then the decoder step by step, with the vocabulary from the logits', async () => {
    const r = await open({ eosAtStep: 4 });
    try {
      assert.equal(r.vocabSize, 64);
      const text = await r.read(grey());
      assert.equal(text.tokens.length, 4);
      assert.equal(text.stop, 'eos');
      assert.ok(text.encoderMs >= 0 && text.decoderMs >= 0);
    } finally {
      await r.close();
    }
  });

  it('refuses a pair that does not fit, naming every mismatch', async () => {
    await assert.rejects(
      open({ inputSize: 320 }),
      isCrash(/do not fit the spec's signatures: encoder trocr_encoder\.onnx input pixel_values is \[1, 3, 320, 320\].*320 is wrong/),
    );
    await assert.rejects(open({ selfCacheLen: 18 }), (err) => {
      assert.ok(isLookoutError(err, 'trocr.dlc_fw_crash'));
      assert.equal((err.details as { mismatches: string[] }).mismatches.length, 24);
      return true;
    });
  });

  it('refuses bytes onnxruntime cannot load, naming the file', async () => {
    const pair = buildTrocrPair({});
    await assert.rejects(TextRecognizer.open(pair.encoder, new Uint8Array([1, 2, 3, 4]), NAMES), isCrash(/onnxruntime cannot load trocr_decoder\.onnx/));
  });

  it('a decoder that throws at its fourth step is TROCR_DLC_FW_CRASH, naming the decoder', async () => {
    const r = await open({ crashAtStep: 3 });
    try {
      await assert.rejects(r.read(grey()), isCrash(/the decoder trocr_decoder\.onnx crashed: .*Gather/));
    } finally {
      await r.close();
    }
  });

  it('a crop of another size is refused before any graph runs', async () => {
    const r = await open({});
    try {
      await assert.rejects(
        r.read(new Float32Array(3 * 320 * 320)),
        (err) => isLookoutError(err, 'argument_invalid') && /expected 3 x 384 x 384/.test(err.message),
      );
    } finally {
      await r.close();
    }
  });
});
