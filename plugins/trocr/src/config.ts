import { z } from 'zod';

const probability = z.coerce.number().min(0).max(1);

/** Keys of the text cascade (spec 02: TROCR_ENCODER_MODEL, TROCR_DECODER_MODEL, SVC_DEVICE_ID, EDGE_V3_ENCODE_ONLY), read from the layer env. */
export const TrocrConfigSchema = z.object({
  SVC_DEVICE_ID: z.string().optional().describe('precision-role routing: the cascade runs only when it contains shadow2'),
  EDGE_V3_ENCODE_ONLY: z.enum(['0', '1']).default('0').describe('1 reserves the camera for the encoder: no neural work, no cascade'),
  TROCR_BACKEND: z.enum(['onnx', 'snpe']).optional().describe('onnx (CPU) or snpe (the DSP); default: from the model files, .dlc is snpe'),
  TROCR_ENCODER_MODEL: z.string().min(1).optional().describe('the encoder; default /data/models/trocr_encoder.onnx (onnx) or trocr_encoder_qcs8550.dlc (snpe)'),
  TROCR_DECODER_MODEL: z.string().min(1).optional().describe('the decoder; default /data/models/trocr_decoder.onnx (onnx) or trocr_decoder_qcs8550.dlc (snpe)'),
  TROCR_MAX_CROPS_PER_SEC: z.coerce.number().positive().max(50).default(4).describe('crops read per second at most; more are dropped and counted'),
  TROCR_MIN_CONFIDENCE: probability.default(0.4).describe('lowest detection confidence a plate or sign is read at'),
  TROCR_MIN_BOX_PX: z.coerce.number().int().min(1).max(384).default(8).describe('smallest box side, pixels, worth reading'),
  TROCR_THREADS: z.coerce.number().int().min(1).max(16).default(1).describe('onnxruntime threads of the cascade (its own worker thread)'),
  TROCR_RECHECK_MS: z.coerce.number().int().min(50).max(600_000).default(5000).describe('how often a failed cascade looks whether the model files changed'),
});
export type TrocrConfig = z.output<typeof TrocrConfigSchema>;
