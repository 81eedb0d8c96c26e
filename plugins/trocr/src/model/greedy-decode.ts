import * as ort from 'onnxruntime-node';
import { LookoutError } from 'lookout/core';
import { emptySelfCache, shiftSelfCache } from './static-cache.js';
import {
  DECODER_INPUT_IDS,
  DECODER_LOGITS,
  DECODER_POSITION,
  TROCR,
  crossKey,
  crossValue,
  pastCrossKey,
  pastCrossValue,
  pastSelfKey,
  pastSelfValue,
  presentSelfKey,
  presentSelfValue,
} from './trocr-contract.js';

/** Why a read ended: EOS, PAD (a static export's filler: nothing more to say), or MAX_SEQ_LEN reached. */
export type StopReason = 'eos' | 'pad' | 'max_tokens';

export interface DecodedRead {
  /** The tokens read, without START and without the EOS or PAD that ended them: at most MAX_SEQ_LEN. */
  tokens: number[];
  stop: StopReason;
  /** Geometric mean of the chosen tokens' probabilities (the ending token's included). */
  confidence: number;
  /** Decoder runs. */
  steps: number;
  decoderMs: number;
}

/** One decoder step: `session.run` of the decoder. */
export type DecoderRun = (feeds: Record<string, ort.Tensor>) => Promise<Record<string, ort.Tensor>>;

export interface GreedyOptions {
  /** The element types the decoder declares for input_ids and cache_position. */
  idsType: 'int64' | 'int32';
  positionType: 'int64' | 'int32';
  now?: () => number;
}

/** `TROCR_DLC_FW_CRASH`-class failure: the decoder answered something the contract does not allow. */
function broken(message: string): LookoutError {
  return new LookoutError('trocr.dlc_fw_crash', `decoder: ${message}`);
}

function indexTensor(type: 'int64' | 'int32', value: number, dims: number[]): ort.Tensor {
  return type === 'int64' ? new ort.Tensor('int64', BigInt64Array.of(BigInt(value)), dims) : new ort.Tensor('int32', Int32Array.of(value), dims);
}

const cacheDims = (len: number) => [1, TROCR.HEADS, len, TROCR.HEAD_DIM];

/**
 * Greedy decoding with static caches (spec 02): START in, then at each step the argmax token goes
 * back in, with cache_position = step. The self-attention caches start empty; after each step the
 * decoder's present [1, 8, 20, 32] is shifted back to [1, 8, 19, 32] (static-cache.ts). The
 * cross-attention caches are the encoder's outputs for this crop, the same at every step. Stops at
 * EOS (or PAD), or after MAX_SEQ_LEN steps: the caches hold no more positions.
 */
export async function greedyDecode(run: DecoderRun, cross: Record<string, ort.Tensor>, options: GreedyOptions): Promise<DecodedRead> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const feeds: Record<string, ort.Tensor> = {};
  const pastSelf: Float32Array[] = [];
  for (let i = 0; i < TROCR.LAYERS; i++) {
    const key = cross[crossKey(i)];
    const value = cross[crossValue(i)];
    if (!key || !value) throw new LookoutError('trocr.dlc_fw_crash', `encoder: no ${!key ? crossKey(i) : crossValue(i)} output`);
    feeds[pastCrossKey(i)] = key;
    feeds[pastCrossValue(i)] = value;
    const k = emptySelfCache();
    const v = emptySelfCache();
    pastSelf.push(k, v);
    // The tensors wrap the buffers that each step's shift rewrites: onnxruntime reads them at run time.
    feeds[pastSelfKey(i)] = new ort.Tensor('float32', k, cacheDims(TROCR.SELF_CACHE_LEN));
    feeds[pastSelfValue(i)] = new ort.Tensor('float32', v, cacheDims(TROCR.SELF_CACHE_LEN));
  }
  const tokens: number[] = [];
  let token: number = TROCR.START;
  let logProbability = 0;
  let stop: StopReason = 'max_tokens';
  let steps = 0;
  for (let step = 0; step < TROCR.MAX_SEQ_LEN; step++) {
    feeds[DECODER_INPUT_IDS] = indexTensor(options.idsType, token, [1, 1]);
    feeds[DECODER_POSITION] = indexTensor(options.positionType, step, [1]);
    const out = await run(feeds);
    steps++;
    const logits = out[DECODER_LOGITS];
    if (!logits || logits.type !== 'float32') throw broken(`no float32 ${DECODER_LOGITS} output at step ${step}`);
    const chosen = argmaxWithLogProbability(logits.data as Float32Array, step);
    for (let i = 0; i < TROCR.LAYERS; i++) {
      for (const [name, past] of [
        [presentSelfKey(i), pastSelf[2 * i]],
        [presentSelfValue(i), pastSelf[2 * i + 1]],
      ] as const) {
        const present = out[name];
        if (!present || present.type !== 'float32') throw broken(`no float32 ${name} output at step ${step}`);
        try {
          shiftSelfCache(present.data as Float32Array, past);
        } catch (err) {
          throw broken(`${name} at step ${step}: ${(err as Error).message}`);
        }
      }
    }
    logProbability += chosen.logProbability;
    if (chosen.id === TROCR.EOS || chosen.id === TROCR.PAD) {
      stop = chosen.id === TROCR.EOS ? 'eos' : 'pad';
      break;
    }
    tokens.push(chosen.id);
    token = chosen.id;
  }
  return { tokens, stop, confidence: Math.exp(logProbability / steps), steps, decoderMs: now() - started };
}

/** The first largest logit and its log-softmax. Non-finite logits are a broken graph, not a read. */
export function argmaxWithLogProbability(logits: Float32Array, step = 0): { id: number; logProbability: number } {
  if (logits.length === 0) throw broken(`empty logits at step ${step}`);
  let id = 0;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i];
    if (!Number.isFinite(v)) throw broken(`logit ${i} is ${v} at step ${step}`);
    if (v > max) {
      max = v;
      id = i;
    }
  }
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  return { id, logProbability: -Math.log(sum) };
}
