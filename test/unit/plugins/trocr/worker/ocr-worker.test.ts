/**
 * The cascade's worker thread with the generated pair on disk: it reads exactly the crop of the box
 * it is given (the same tokens as the recognizer on core's crop of that box; pixels outside the box
 * change nothing), and it fails closed with TROCR_DLC_FW_CRASH.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { CropResizer } from '../../../../../native/ts/crop-resizer.js';
import { TextRecognizer } from '../../../../../plugins/trocr/src/model/text-recognizer.js';
import { OcrWorker } from '../../../../../plugins/trocr/src/worker/ocr-worker.js';
import type { CropBox } from '../../../../../plugins/trocr/src/worker/worker-protocol.js';
import { testFrameBytes } from '../../../../support/onnx-model.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';
import { buildTrocrPair, writeTrocrPair, type TrocrModelSpec } from '../../../../support/trocr-onnx-model.js';

const W = 640;
const H = 640;
const BOX: CropBox = [200.4, 300.2, 330.7, 352.9];

describe('trocr: the cascade worker', () => {
  let scratch: ScratchDir;
  before(async () => {
    scratch = await scratchDir('trocr-worker-');
  });
  after(() => scratch.cleanup());

  async function pairOnDisk(name: string, spec: TrocrModelSpec) {
    const pair = buildTrocrPair(spec);
    return { pair, paths: await writeTrocrPair(join(scratch.dir, name), pair) };
  }

  it('reads exactly the crop of the box: the recognizer’s tokens on core’s crop, whatever lies outside the box', async () => {
    const { pair, paths } = await pairOnDisk('good', {});
    const worker = await OcrWorker.open({ encoderPath: paths.encoder, decoderPath: paths.decoder, threads: 1 });
    const recognizer = await TextRecognizer.open(pair.encoder, pair.decoder, { encoderName: 'e', decoderName: 'd' });
    try {
      assert.equal(worker.opened.vocabSize, 64);
      const frame = { width: W, height: H, data: testFrameBytes(W, H, 5) };
      const expected = await recognizer.read(new CropResizer({ size: 384 }).run(frame, [BOX]).tensor);
      const [read] = await worker.read(frame, [BOX]);
      assert.deepEqual(read.tokens, expected.tokens);
      assert.deepEqual(read.rect, [200, 300, 131, 53], 'the whole pixels the box touches');
      // Another picture around the same box: the same read.
      const other = testFrameBytes(W, H, 9);
      for (let y = 300; y < 353; y++) other.set(frame.data.subarray((y * W + 200) * 3, (y * W + 331) * 3), (y * W + 200) * 3);
      assert.deepEqual((await worker.read({ width: W, height: H, data: other }, [BOX]))[0].tokens, expected.tokens);
      // The box moved onto other pixels: another read.
      const moved = await worker.read(frame, [[260, 100, 391, 153]]);
      assert.notDeepEqual(moved[0].tokens, expected.tokens);
      // Several boxes of one frame, in their order.
      const both = await worker.read(frame, [BOX, [260, 100, 391, 153]]);
      assert.deepEqual(
        both.map((r) => r.tokens),
        [expected.tokens, moved[0].tokens],
      );
    } finally {
      await recognizer.close();
      await worker.close();
    }
  });

  it('is busy while a read is in flight, and refuses a second one rather than queue it', async () => {
    const { paths } = await pairOnDisk('busy', {});
    const worker = await OcrWorker.open({ encoderPath: paths.encoder, decoderPath: paths.decoder, threads: 1 });
    try {
      const frame = { width: W, height: H, data: testFrameBytes(W, H, 1) };
      const first = worker.read(frame, [BOX]);
      assert.equal(worker.busy, true);
      await assert.rejects(worker.read(frame, [BOX]), /one frame at a time/);
      await first;
      assert.equal(worker.busy, false);
    } finally {
      await worker.close();
    }
  });

  it('an incompatible pair does not open: TROCR_DLC_FW_CRASH with each mismatch', async () => {
    const { paths } = await pairOnDisk('small', { inputSize: 320 });
    await assert.rejects(OcrWorker.open({ encoderPath: paths.encoder, decoderPath: paths.decoder, threads: 1 }), (err) => {
      assert.ok(isLookoutError(err, 'trocr.dlc_fw_crash'), String(err));
      const details = err.details as { load_report: string; mismatches: string[] };
      assert.equal(details.load_report, 'TROCR_DLC_FW_CRASH');
      assert.equal(details.mismatches.length, 13, 'pixel_values and the 12 cross caches');
      return true;
    });
  });

  it('a decoder that throws fails the read with TROCR_DLC_FW_CRASH', async () => {
    const { paths } = await pairOnDisk('crash', { crashAtStep: 2 });
    const worker = await OcrWorker.open({ encoderPath: paths.encoder, decoderPath: paths.decoder, threads: 1 });
    try {
      await assert.rejects(
        worker.read({ width: W, height: H, data: testFrameBytes(W, H, 1) }, [BOX]),
        (err) => isLookoutError(err, 'trocr.dlc_fw_crash') && /crashed/.test(err.message),
      );
    } finally {
      await worker.terminate();
    }
  });
});
