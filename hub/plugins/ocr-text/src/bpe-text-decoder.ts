import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { LookoutError, z } from 'lookout/core';

/** RoBERTa's special tokens (a TrOCR processor's tokenizer): decoded reads leave them out. */
const SPECIAL_TOKENS = ['<s>', '<pad>', '</s>', '<unk>', '<mask>'] as const;

/** What is used of tokenizers.js's Tokenizer (its bundled typings do not resolve under NodeNext: their relative imports have no extension). */
interface ByteLevelTokenizer {
  decode(ids: number[], options: { skip_special_tokens: boolean }): string;
}
const TokenizerClass = Tokenizer as unknown as new (tokenizerJson: object, tokenizerConfig: object) => ByteLevelTokenizer;

const VocabSchema = z.record(z.string(), z.number().int().nonnegative());

export interface DecodedText {
  text: string;
  /** Ids the vocabulary does not have: left out of the text, named here. */
  unknown_ids: number[];
}

export interface TokenizerFiles {
  dir: string;
  vocabPath: string;
  mergesPath: string;
}

function invalid(message: string, path: string, cause?: unknown): LookoutError {
  return new LookoutError('config_invalid', `LOOKOUT_HUB_OCR_TOKENIZER_DIR: ${path}: ${message}`, {
    cause,
    details: { key: 'LOOKOUT_HUB_OCR_TOKENIZER_DIR', path },
  });
}

/**
 * Token ids to text with the operator's tokenizer files: a TrOCR processor's vocab.json and
 * merges.txt (RoBERTa byte-level BPE), read from one folder. Hugging Face's tokenizers.js does the
 * decoding (ids → tokens → bytes → UTF-8) from a tokenizer.json built here in memory, as the
 * `transformers` converter builds it for RoBERTa; nothing is fetched. Special tokens are skipped.
 */
export class BpeTextDecoder {
  private constructor(
    private readonly tokenizer: ByteLevelTokenizer,
    private readonly ids: ReadonlySet<number>,
    readonly files: TokenizerFiles,
  ) {}

  /** Entries of vocab.json. */
  get vocabSize(): number {
    return this.ids.size;
  }

  static async load(dir: string): Promise<BpeTextDecoder> {
    const files = { dir, vocabPath: join(dir, 'vocab.json'), mergesPath: join(dir, 'merges.txt') };
    const read = async (path: string) => {
      try {
        return await readFile(path, 'utf8');
      } catch (err) {
        throw invalid(
          `cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); the folder needs vocab.json and merges.txt`,
          path,
          err,
        );
      }
    };
    // One after the other: with both missing, the error names vocab.json every time, not whichever read failed first.
    const vocabText = await read(files.vocabPath);
    const mergesText = await read(files.mergesPath);
    let json: unknown;
    try {
      json = JSON.parse(vocabText);
    } catch (err) {
      throw invalid(`not JSON: ${(err as Error).message}`, files.vocabPath, err);
    }
    const parsed = VocabSchema.safeParse(json);
    if (!parsed.success) throw invalid('not a vocabulary (an object of token → non-negative integer id)', files.vocabPath);
    const vocab = parsed.data;
    const size = Object.keys(vocab).length;
    if (size === 0) throw invalid('the vocabulary is empty', files.vocabPath);
    const merges: string[] = [];
    mergesText.split(/\r?\n/).forEach((line, n) => {
      if (line === '' || (n === 0 && line.startsWith('#version'))) return;
      const parts = line.split(' ');
      if (parts.length !== 2 || !parts[0] || !parts[1])
        throw invalid(`line ${n + 1} is not a merge ("left right"): ${JSON.stringify(line.slice(0, 80))}`, files.mergesPath);
      merges.push(line);
    });
    const special = SPECIAL_TOKENS.filter((t) => vocab[t] !== undefined);
    const tokenizerJson = {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: special.map((content) => ({
        id: vocab[content],
        content,
        single_word: false,
        lstrip: content === '<mask>',
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      post_processor: null,
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: vocab['<unk>'] !== undefined ? '<unk>' : null,
        continuing_subword_prefix: '',
        end_of_word_suffix: '',
        fuse_unk: false,
        byte_fallback: false,
        vocab,
        merges,
      },
    };
    let tokenizer: ByteLevelTokenizer;
    try {
      tokenizer = new TokenizerClass(tokenizerJson, { clean_up_tokenization_spaces: false });
    } catch (err) {
      throw invalid(`the files do not make a byte-level BPE tokenizer: ${(err as Error).message}`, dir, err);
    }
    return new BpeTextDecoder(tokenizer, new Set(Object.values(vocab)), files);
  }

  decode(ids: readonly number[]): DecodedText {
    const known = ids.filter((id) => this.ids.has(id));
    const unknown = ids.filter((id) => !this.ids.has(id));
    // tokenizers.js refuses an empty list; a read of nothing is the empty text.
    return { text: known.length === 0 ? '' : this.tokenizer.decode(known, { skip_special_tokens: true }), unknown_ids: unknown };
  }
}
