/**
 * The TrOCR pair's wire contract (spec 02, "Text-recognition models"), in one place: constants, and the
 * I/O names and shapes the encoder and decoder are checked against at load.
 *
 * The spec fixes the shapes and constants but not every tensor name. The names here are those of a
 * Hugging Face TrOCR (VisionEncoderDecoder) ONNX export made with static caches:
 *
 * - encoder `trocr_encoder.onnx` (trocr_encoder_qcs8550.dlc): `pixel_values` [1, 3, 384, 384] float32,
 *   RGB in 0..1, in; out, for each of the 6 decoder layers i, the cross-attention cache the layer's
 *   k/v projections make of the image: `present.<i>.encoder.key` and `present.<i>.encoder.value`
 *   [1, 8, 578, 32] (578 = 24 × 24 patches of 16 px + the two DeiT tokens). The encoder computes
 *   them once per crop, so the decoder never sees the encoder's hidden states.
 * - decoder `trocr_decoder.onnx` (trocr_decoder_qcs8550.dlc), one autoregressive step:
 *   `input_ids` [1, 1] (int64, or int32 as some compiled exports take it), `cache_position` [1]
 *   (the step, 0..19: the token's position and how many cache slots are live), and per layer
 *   `past_key_values.<i>.decoder.key|value` [1, 8, 19, 32] (self-attention) and
 *   `past_key_values.<i>.encoder.key|value` [1, 8, 578, 32] (the encoder's outputs, as they are);
 *   out `logits` [1, 1, vocab] and `present.<i>.decoder.key|value` [1, 8, 20, 32]: the 19 slots
 *   with this step's key/value appended.
 *
 * The self-attention window is kept right-aligned: at step t the last t of the 19 slots are live
 * (the graph masks the others), the new entry is slot 19 of the output, and the host shifts the
 * output back to 19 by dropping slot 0 (`present[:, :, 1:20, :]`), the oldest or an empty one.
 * With 19 slots and the current token, 20 positions fit: MAX_SEQ_LEN.
 */

export const TROCR = Object.freeze({
  /** decoder_start_token_id: TrOCR starts from </s>. */
  START: 2,
  EOS: 2,
  PAD: 1,
  /** Positions the static caches hold (19 past + the current token): at most 20 tokens per read. */
  MAX_SEQ_LEN: 20,
  LAYERS: 6,
  HEADS: 8,
  HEAD_DIM: 32,
  /** The self-attention cache the decoder takes; it gives back SELF_CACHE_LEN + 1. */
  SELF_CACHE_LEN: 19,
  /** Encoder positions: (384 / 16)² patches + the class and distillation tokens. */
  CROSS_LEN: 578,
  /** Crop side: the spec's input is 384 × 384 (320 is wrong). */
  CROP_SIZE: 384,
  /** Storage the two files need (spec 02: about 250 MB or more). */
  MIN_STORAGE_BYTES: 250 * 1024 * 1024,
});

export type TensorElement = 'float32' | 'int64' | 'int32';

/** One input or output: its name, shape (a string is a symbolic dimension the check accepts as it is) and element types accepted. */
export interface TensorSpec {
  name: string;
  shape: readonly (number | 'vocab')[];
  types: readonly TensorElement[];
}

const INDEX_TYPES: readonly TensorElement[] = ['int64', 'int32'];
const FLOAT: readonly TensorElement[] = ['float32'];
const layers = Array.from({ length: TROCR.LAYERS }, (_, i) => i);
const cache = (len: number) => [1, TROCR.HEADS, len, TROCR.HEAD_DIM] as const;

export const crossKey = (layer: number) => `present.${layer}.encoder.key`;
export const crossValue = (layer: number) => `present.${layer}.encoder.value`;
export const pastCrossKey = (layer: number) => `past_key_values.${layer}.encoder.key`;
export const pastCrossValue = (layer: number) => `past_key_values.${layer}.encoder.value`;
export const pastSelfKey = (layer: number) => `past_key_values.${layer}.decoder.key`;
export const pastSelfValue = (layer: number) => `past_key_values.${layer}.decoder.value`;
export const presentSelfKey = (layer: number) => `present.${layer}.decoder.key`;
export const presentSelfValue = (layer: number) => `present.${layer}.decoder.value`;

export const ENCODER_INPUT = 'pixel_values';
export const DECODER_INPUT_IDS = 'input_ids';
export const DECODER_POSITION = 'cache_position';
export const DECODER_LOGITS = 'logits';

export const ENCODER_IO: { inputs: readonly TensorSpec[]; outputs: readonly TensorSpec[] } = Object.freeze({
  inputs: [{ name: ENCODER_INPUT, shape: [1, 3, TROCR.CROP_SIZE, TROCR.CROP_SIZE], types: FLOAT }],
  outputs: layers.flatMap((i) => [
    { name: crossKey(i), shape: cache(TROCR.CROSS_LEN), types: FLOAT },
    { name: crossValue(i), shape: cache(TROCR.CROSS_LEN), types: FLOAT },
  ]),
});

export const DECODER_IO: { inputs: readonly TensorSpec[]; outputs: readonly TensorSpec[] } = Object.freeze({
  inputs: [
    { name: DECODER_INPUT_IDS, shape: [1, 1], types: INDEX_TYPES },
    { name: DECODER_POSITION, shape: [1], types: INDEX_TYPES },
    ...layers.flatMap((i) => [
      { name: pastSelfKey(i), shape: cache(TROCR.SELF_CACHE_LEN), types: FLOAT },
      { name: pastSelfValue(i), shape: cache(TROCR.SELF_CACHE_LEN), types: FLOAT },
      { name: pastCrossKey(i), shape: cache(TROCR.CROSS_LEN), types: FLOAT },
      { name: pastCrossValue(i), shape: cache(TROCR.CROSS_LEN), types: FLOAT },
    ]),
  ],
  outputs: [
    { name: DECODER_LOGITS, shape: [1, 1, 'vocab'], types: FLOAT },
    ...layers.flatMap((i) => [
      { name: presentSelfKey(i), shape: cache(TROCR.SELF_CACHE_LEN + 1), types: FLOAT },
      { name: presentSelfValue(i), shape: cache(TROCR.SELF_CACHE_LEN + 1), types: FLOAT },
    ]),
  ],
});
