/**
 * Token ids to text with tokenizer files in a TrOCR processor's shape (vocab.json + merges.txt,
 * RoBERTa byte-level BPE): the test vocabulary of test/fixtures/trocr.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir, copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isLookoutError } from '../../../../../core/src/errors/lookout-error.js';
import { packageRoot } from '../../../../../core/src/paths/package-root.js';
import { BpeTextDecoder } from '../../../../../hub/plugins/ocr-text/src/bpe-text-decoder.js';
import { scratchDir, type ScratchDir } from '../../../../support/scratch-dir.js';

const VOCAB_DIR = join(packageRoot(), 'test', 'fixtures', 'trocr');

describe('ocr-text: byte-level BPE decoding', () => {
  let decoder: BpeTextDecoder;
  let scratch: ScratchDir;
  before(async () => {
    decoder = await BpeTextDecoder.load(VOCAB_DIR);
    scratch = await scratchDir('ocr-vocab-');
  });
  after(() => scratch.cleanup());

  it('decodes ids to tokens to bytes: Ġ is the space, merged tokens spell their parts, special ids are left out', () => {
    assert.equal(decoder.vocabSize, 64);
    // </s> STOP ĠPARK </s> <pad>
    assert.deepEqual(decoder.decode([2, 47, 56, 2, 1]), { text: 'STOP PARK', unknown_ids: [] });
    // A B 1 2 3 - 7 → "AB123-7"
    assert.deepEqual(decoder.decode([49, 52, 41, 37]), { text: 'AB123-7', unknown_ids: [] });
    assert.equal(decoder.decode([]).text, '');
  });

  it('joins the bytes of one character split across tokens (é is Ã ©)', () => {
    assert.equal(decoder.decode([8, 22, 43, 44]).text, 'ESé');
    assert.equal(decoder.decode([58, 23]).text, ' éT');
  });

  it('names ids the vocabulary does not have and leaves them out', () => {
    assert.deepEqual(decoder.decode([4, 64, 5, 999]), { text: 'AB', unknown_ids: [64, 999] });
  });

  it('refuses missing or malformed files, naming the file', async () => {
    const dir = join(scratch.dir, 'broken');
    await mkdir(dir);
    await assert.rejects(
      BpeTextDecoder.load(dir),
      (err) => isLookoutError(err, 'config_invalid') && /vocab\.json: cannot read it \(ENOENT\)/.test(err.message),
    );
    await writeFile(join(dir, 'vocab.json'), '{"a": -1}');
    await copyFile(join(VOCAB_DIR, 'merges.txt'), join(dir, 'merges.txt'));
    await assert.rejects(BpeTextDecoder.load(dir), /vocab\.json: not a vocabulary/);
    await writeFile(join(dir, 'vocab.json'), '{"a": 0, "b": 1}');
    await writeFile(join(dir, 'merges.txt'), '#version: 0.2\na b c\n');
    await assert.rejects(BpeTextDecoder.load(dir), /merges\.txt: line 2 is not a merge/);
  });
});
