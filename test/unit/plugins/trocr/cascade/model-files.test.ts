/**
 * Where the pair comes from (spec 02: TROCR_ENCODER_MODEL, TROCR_DECODER_MODEL, /data/models, the
 * .onnx and .dlc artifact names), the storage it needs (about 250 MB for both files, measured on a
 * real small filesystem), and the fingerprint the recompile gate compares.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { checkStorage, modelFileStates, requirePresent, resolveModelFiles } from '../../../../../plugins/trocr/src/cascade/model-files.js';
import { snpeRefusal } from '../../../../../plugins/trocr/src/cascade/snpe-refusal.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../../../support/small-filesystem.js';

describe('trocr: model files', () => {
  let scratch: ScratchDir;
  before(async () => {
    scratch = await scratchDir('trocr-files-');
  });
  after(() => scratch.cleanup());

  it('defaults to the spec’s ONNX export names under /data/models; .dlc files mean snpe', () => {
    const root = scratch.dir;
    assert.deepEqual(resolveModelFiles({}, root), {
      backend: 'onnx',
      encoder: join(root, 'data/models/trocr_encoder.onnx'),
      decoder: join(root, 'data/models/trocr_decoder.onnx'),
    });
    assert.deepEqual(resolveModelFiles({ TROCR_BACKEND: 'snpe' }, root), {
      backend: 'snpe',
      encoder: join(root, 'data/models/trocr_encoder_qcs8550.dlc'),
      decoder: join(root, 'data/models/trocr_decoder_qcs8550.dlc'),
    });
    assert.equal(resolveModelFiles({ TROCR_ENCODER_MODEL: '/data/models/enc.dlc', TROCR_DECODER_MODEL: '/data/models/dec.dlc' }, root).backend, 'snpe');
    assert.throws(
      () => resolveModelFiles({ TROCR_BACKEND: 'onnx', TROCR_DECODER_MODEL: '/data/models/trocr_decoder_qcs8550.dlc' }, root),
      (err) => isLookoutError(err, 'config_invalid') && /TROCR_DECODER_MODEL=.*cannot run on the onnx back-end/.test(err.message),
    );
    assert.throws(
      () => resolveModelFiles({ TROCR_ENCODER_MODEL: '../../etc/x.onnx' }, root),
      (err) => isLookoutError(err, 'forbidden'),
    );
  });

  it('snpe refuses here with what is missing and what to use instead', () => {
    const err = snpeRefusal(resolveModelFiles({ TROCR_BACKEND: 'snpe' }, scratch.dir), { SNPE_ROOT: undefined });
    assert.ok(isLookoutError(err, 'backend_unavailable'));
    assert.match(err.message, /TROCR_BACKEND=snpe cannot run .*trocr_encoder_qcs8550\.dlc and .*trocr_decoder_qcs8550\.dlc on the DSP here/);
    assert.match(err.message, /SNPE/);
    assert.match(err.message, /use TROCR_BACKEND=onnx with trocr_encoder\.onnx and trocr_decoder\.onnx/);
  });

  it('names missing files; the fingerprint changes when a file is written again', async () => {
    const files = resolveModelFiles({}, scratch.dir);
    const none = await modelFileStates(files);
    assert.throws(
      () => requirePresent(none),
      (err) => isLookoutError(err, 'trocr.model_missing') && err.message.includes(files.encoder) && err.message.includes(files.decoder),
    );
    await mkdir(join(scratch.dir, 'data/models'), { recursive: true });
    await writeFile(files.encoder, 'e');
    await writeFile(files.decoder, 'd');
    const first = await modelFileStates(files);
    requirePresent(first);
    assert.equal(first.encoder.bytes, 1);
    assert.equal((await modelFileStates(files)).fingerprint, first.fingerprint, 'unchanged files, same fingerprint');
    await utimes(files.decoder, new Date(), new Date(Date.now() + 5000));
    assert.notEqual((await modelFileStates(files)).fingerprint, first.fingerprint);
  });

  it('a volume with room accepts the pair', async () => {
    const files = resolveModelFiles({}, scratch.dir);
    await checkStorage(files, await modelFileStates(files));
  });

  describe('on a small volume', { skip: cannotMount() }, () => {
    let small: SmallFilesystem;
    before(async () => {
      small = await mountSmallFilesystem({ sizeKiB: 1024, prefix: 'trocr-smallfs-' });
    });
    after(() => small.unmount());

    it('less than 250 MB for both files is refused, naming the folder and the figures', async () => {
      const root = join(scratch.dir, 'small-root');
      await mkdir(join(root, 'data'), { recursive: true });
      await symlink(small.dir, join(root, 'data/models'));
      const files = resolveModelFiles({}, root);
      await writeFile(files.encoder, new Uint8Array(100 * 1024));
      await assert.rejects(checkStorage(files, await modelFileStates(files)), (err) => {
        assert.ok(isLookoutError(err, 'trocr.storage_insufficient'), String(err));
        assert.match(err.message, /need about 250 MB for both files; .* has 0\.\d MB free and the files take 0\.1 MB/);
        return true;
      });
    });
  });
});
