import { z } from 'zod';
import { BACKEND_NAMES, describeDefaultChoice } from './backends/backend-records.js';
import { SIM_CLASS_MAPS } from './backends/sim-class-map.js';

const probability = z.coerce.number().min(0).max(1);

/** Keys of the detector (spec 02: RF_DETR_*), read from the layer env. */
export const DetectorConfigSchema = z.object({
  EDGE_V3_ENCODE_ONLY: z
    .enum(['0'], { error: () => 'the camera is reserved for the encoder (EDGE_V3_ENCODE_ONLY=1); set it to 0 to share the camera with the detector' })
    .default('0'),
  RF_DETR_BACKEND: z.enum(BACKEND_NAMES).optional().describe(`inference back-end; default: ${describeDefaultChoice()}`),
  RF_DETR_MODEL_PATH: z.string().min(1).optional().describe('model package (.tar) or model file; a device path under the data root'),
  RF_DETR_EDGE4_MODEL: z.string().min(1).optional().describe('the custom edge4 package (rf_detr_edge4.tar); used when RF_DETR_MODEL_PATH is unset'),
  RF_DETR_STRIDE_FPS: z.coerce.number().positive().max(30).default(10).describe('detector rate, frames per second'),
  RF_DETR_INPUT_SIZE: z.coerce.number().int().positive().optional().describe('preprocessing target (544, 640 or 672); default: the package input'),
  RF_DETR_SCORE_THRESHOLD: probability.default(0.3).describe('lowest confidence a detection is kept at'),
  RF_DETR_TOP_K: z.coerce.number().int().positive().max(10_000).default(300),
  SIM_DET_SEED: z.coerce.number().int().nonnegative().default(1),
  SIM_DET_JITTER_PX: z.coerce.number().min(0).max(100).default(2),
  SIM_DET_MISS_RATE: probability.default(0.03),
  SIM_DET_FP_RATE: z.coerce.number().min(0).max(20).default(0.02),
  SIM_DET_PERSON_CONFIDENCE: probability.optional().describe('base confidence of simulated persons'),
  SIM_DET_CONFIDENCE_SPREAD: probability.default(0.06),
  SIM_DET_CLASS_MAP: z
    .enum(SIM_CLASS_MAPS)
    .default('production')
    .describe('weights the sim back-end simulates: production, or omni15 (an Omni package remapped: plates 14, signs 15, for the text cascade)'),
});
export type DetectorConfig = z.output<typeof DetectorConfigSchema>;
