import * as ort from 'onnxruntime-node';
import { LookoutError, isLookoutError } from 'lookout/core';
import { ioMismatches } from './check-io.js';
import { greedyDecode, type DecodedRead } from './greedy-decode.js';
import { DECODER_INPUT_IDS, DECODER_IO, DECODER_LOGITS, DECODER_POSITION, ENCODER_INPUT, ENCODER_IO, TROCR } from './trocr-contract.js';

export interface RecognizerOptions {
  /** Names for messages (the files' paths). */
  encoderName: string;
  decoderName: string;
  threads?: number;
}

export interface CropText extends DecodedRead {
  encoderMs: number;
}

/** The spec's error: a text-recognition graph that does not load, does not fit, or crashes in use. */
export function dlcFwCrash(message: string, options: { cause?: unknown; mismatches?: string[] } = {}): LookoutError {
  return new LookoutError('trocr.dlc_fw_crash', `TROCR_DLC_FW_CRASH: ${message}`, {
    cause: options.cause,
    details: { load_report: 'TROCR_DLC_FW_CRASH', ...(options.mismatches ? { mismatches: options.mismatches } : {}) },
  });
}

/** CPU sessions with every graph optimization, as the detector's inference kit makes them (this runs in the cascade's own thread). */
function cpuSession(bytes: Uint8Array, threads: number | undefined): Promise<ort.InferenceSession> {
  const options: ort.InferenceSession.SessionOptions = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
  if (threads !== undefined) options.intraOpNumThreads = threads;
  return ort.InferenceSession.create(bytes, options);
}

const PIXELS = 3 * TROCR.CROP_SIZE * TROCR.CROP_SIZE;

/**
 * The encoder and decoder, two separate graphs (never fused), checked against the contract at load:
 * every mismatch is named and the pair is refused (fail closed). `read` runs the encoder once on a
 * crop, then the decoder step by step (greedy-decode.ts).
 */
export class TextRecognizer {
  private constructor(
    private readonly encoder: ort.InferenceSession,
    private readonly decoder: ort.InferenceSession,
    readonly indexTypes: { idsType: 'int64' | 'int32'; positionType: 'int64' | 'int32' },
    /** From the decoder's logits; null when the export leaves it symbolic. */
    readonly vocabSize: number | null,
    private readonly names: RecognizerOptions,
  ) {}

  static async open(encoderBytes: Uint8Array, decoderBytes: Uint8Array, options: RecognizerOptions): Promise<TextRecognizer> {
    const load = async (bytes: Uint8Array, name: string) => {
      try {
        return await cpuSession(bytes, options.threads);
      } catch (err) {
        throw dlcFwCrash(`onnxruntime cannot load ${name}: ${(err as Error).message}`, { cause: err });
      }
    };
    const encoder = await load(encoderBytes, options.encoderName);
    let decoder: ort.InferenceSession;
    try {
      decoder = await load(decoderBytes, options.decoderName);
    } catch (err) {
      await encoder.release();
      throw err;
    }
    const mismatches = [
      ...ioMismatches(`encoder ${options.encoderName}`, { inputs: encoder.inputMetadata, outputs: encoder.outputMetadata }, ENCODER_IO),
      ...ioMismatches(`decoder ${options.decoderName}`, { inputs: decoder.inputMetadata, outputs: decoder.outputMetadata }, DECODER_IO),
    ];
    if (mismatches.length > 0) {
      await Promise.all([encoder.release(), decoder.release()]);
      throw dlcFwCrash(`the text-recognition graphs do not fit the spec's signatures: ${mismatches.join('; ')}`, { mismatches });
    }
    const typeOf = (name: string) => {
      const m = decoder.inputMetadata.find((i) => i.name === name);
      return m?.isTensor && m.type === 'int32' ? 'int32' : 'int64';
    };
    const logits = decoder.outputMetadata.find((m) => m.name === DECODER_LOGITS);
    const vocab = logits?.isTensor ? logits.shape[2] : undefined;
    const indexTypes = { idsType: typeOf(DECODER_INPUT_IDS), positionType: typeOf(DECODER_POSITION) } as const;
    return new TextRecognizer(encoder, decoder, indexTypes, typeof vocab === 'number' ? vocab : null, options);
  }

  /** One crop, [3, 384, 384] RGB in 0..1, to token ids. A failure of either graph is TROCR_DLC_FW_CRASH. */
  async read(pixels: Float32Array): Promise<CropText> {
    if (pixels.length !== PIXELS) throw new LookoutError('argument_invalid', `a crop has ${pixels.length} values, expected 3 x 384 x 384 = ${PIXELS}`);
    const started = performance.now();
    let cross: ort.InferenceSession.OnnxValueMapType;
    try {
      cross = await this.encoder.run({ [ENCODER_INPUT]: new ort.Tensor('float32', pixels, [1, 3, TROCR.CROP_SIZE, TROCR.CROP_SIZE]) });
    } catch (err) {
      throw dlcFwCrash(`the encoder ${this.names.encoderName} crashed: ${(err as Error).message}`, { cause: err });
    }
    const encoderMs = performance.now() - started;
    try {
      const read = await greedyDecode((feeds) => this.decoder.run(feeds), cross, this.indexTypes);
      return { ...read, encoderMs };
    } catch (err) {
      if (isLookoutError(err, 'trocr.dlc_fw_crash')) throw dlcFwCrash(`${this.names.decoderName}: ${err.message}`, { cause: err });
      throw dlcFwCrash(`the decoder ${this.names.decoderName} crashed: ${(err as Error).message}`, { cause: err });
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.encoder.release(), this.decoder.release()]);
  }
}
