import { z } from 'zod';
import { busTopic } from 'lookout/core/contracts';
import { definePlugin } from 'lookout/core';
import { DetectionPipelineToken } from '../../detector/src/service.js';
import { TextCascade } from './cascade/text-cascade.js';
import { TrocrConfigSchema } from './config.js';
import { OCR_EVENT_SUFFIX, OcrStatusSchema, type OcrRead } from './service.js';

/**
 * The precision role's text cascade (spec 02, "Text-recognition models"): license plates and signs
 * the detector finds are cropped (384 × 384 RGB, 0..1) and read by a TrOCR encoder and decoder,
 * greedy with static caches, on a thread of its own. Token ids go out on events/ocr with the
 * detection, track and frame they came from; text is decoded on the host (the ocr-text hub plugin).
 * It runs only where SVC_DEVICE_ID contains shadow2 and EDGE_V3_ENCODE_ONLY is 0, and says why not.
 */
export default definePlugin({
  name: 'trocr',
  version: '1.0.0',
  core: '^1',
  description: 'TrOCR text cascade on the precision role: plate and sign crops to token ids (events/ocr), fail closed on TROCR_DLC_FW_CRASH',
  layer: 'layer1',
  // Optional: without a running detector (encode-only, a failed model) the cascade stays up, idle, and says why.
  optionalRequires: [DetectionPipelineToken],
  config: TrocrConfigSchema,
  topics: [busTopic(OCR_EVENT_SUFFIX, 'Token ids of plate and sign crops (text recognition on the precision role)')],
  errors: [
    {
      code: 'dlc_fw_crash',
      status: 503,
      description:
        'TROCR_DLC_FW_CRASH: a text-recognition graph does not load, does not fit the spec’s signatures, or crashed; the cascade is partial until its files change',
    },
    { code: 'storage_insufficient', status: 507, description: 'less than about 250 MB for the two text-recognition files' },
    { code: 'model_missing', status: 503, description: 'the encoder or decoder file is not on the device' },
  ],
  tools: [
    {
      name: 'get_ocr_status',
      readOnly: true,
      idempotent: true,
      description:
        'Text cascade state (idle, loading, running, partial and why), models, classes read, recent reads and best read per track, crops per second, per-token decoder time',
      input: z.object({}),
      output: OcrStatusSchema,
    },
  ],
  start(ctx) {
    const cascade = new TextCascade({
      config: ctx.config,
      dataDir: ctx.runtime.dataDir,
      pipeline: ctx.services.optional(DetectionPipelineToken),
      publish: (read: OcrRead) => ctx.bus.publish(OCR_EVENT_SUFFIX, read),
      clock: ctx.clock,
      log: ctx.log,
      health: (state, message) => ctx.health.set(state, message),
    });
    ctx.tools.register('get_ocr_status', () => cascade.status());
    cascade.start();
    return { stop: () => cascade.stop() };
  },
});

export { TextCascade } from './cascade/text-cascade.js';
