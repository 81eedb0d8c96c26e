import { z } from 'zod';
import { definePlugin, toLookoutError } from 'lookout/core';
import { queryInteger } from 'lookout/core/contracts';
import { CASCADE_STATES, OCR_EVENT_SUFFIX, STOP_REASONS } from '../../../../plugins/trocr/src/service.js';
import { BUS_CACHE } from '../../bus-cache/src/service.js';
import { DEVICE_REGISTRY } from '../../registry/src/service.js';
import { DEVICE_TOOLS } from '../../tools-proxy/src/service.js';
import { BpeTextDecoder } from './bpe-text-decoder.js';
import { DeviceReads } from './device-reads.js';
import { mergeByTrack } from './merge-reads.js';
import { callOcrStatus } from './ocr-status-call.js';

const OcrQuery = z.object({
  target: z.string().min(1).max(256).describe('device id, device address (ip or ip:port) or label such as "precision"'),
  limit: queryInteger(1, 500).optional().describe('reads per answer, newest track first (default 50)'),
});

const TextRead = z.object({
  read_id: z.string(),
  track_id: z.number().int().nullable(),
  text: z.string().nullable().describe('null without a tokenizer (tokenizer.error says why)'),
  token_ids: z.array(z.number().int()),
  unknown_ids: z.array(z.number().int()).describe('ids the vocabulary does not have, left out of the text'),
  confidence: z.number(),
  reads_merged: z.number().int().describe('reads of this track; the most confident is shown'),
  class_id: z.number().int(),
  class_label: z.enum(['license_plate', 'sign']),
  det: z.object({ c: z.number(), p: z.number(), b: z.array(z.number()).describe('x1, y1, x2, y2') }),
  stop: z.enum(STOP_REASONS),
  frame_time: z.string(),
  read_at: z.string(),
  last_read_at: z.string(),
});

const OcrResponse = z.object({
  device_id: z.string(),
  online: z.boolean(),
  cascade: z.enum(CASCADE_STATES).nullable().describe('the device’s get_ocr_status; null when it could not be asked (status_error)'),
  cascade_reason: z.string().nullable(),
  load_report: z.literal('TROCR_DLC_FW_CRASH').nullable(),
  status_error: z.object({ code: z.string(), message: z.string() }).nullable(),
  tokenizer: z.object({
    loaded: z.boolean(),
    dir: z.string().nullable(),
    vocab_size: z.number().int().nullable(),
    /** The decoder's vocabulary (from the device) and the tokenizer's agree; null when either is unknown. */
    vocab_matches: z.boolean().nullable(),
    error: z.string().nullable(),
  }),
  tracks: z.number().int().describe('entries before the limit: tracks, and reads without a track'),
  reads: z.array(TextRead),
  generated_at: z.string(),
});

/**
 * Text of the precision role's reads: the trocr plugin publishes token ids (events/ocr) and keeps
 * recent reads (get_ocr_status); the hub decodes them with the operator's tokenizer files (a TrOCR
 * processor's vocab.json and merges.txt), merged per track, the most confident read of each.
 */
export default definePlugin({
  name: 'ocr-text',
  version: '1.0.0',
  core: '^1',
  description: 'Text of the precision role’s plate and sign reads (GET /fleet/ocr): token ids decoded with the operator’s TrOCR tokenizer, merged per track',
  requires: [DEVICE_REGISTRY, BUS_CACHE, DEVICE_TOOLS],
  config: z.object({
    /** A folder with a TrOCR processor's vocab.json and merges.txt (what `processor.save_pretrained` writes). */
    LOOKOUT_HUB_OCR_TOKENIZER_DIR: z.string().min(1).optional(),
    LOOKOUT_HUB_OCR_TOOL_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(5000),
    /** Reads kept per device from the bus, and devices kept. */
    LOOKOUT_HUB_OCR_READS_PER_DEVICE: z.coerce.number().int().min(1).max(10_000).default(256),
    LOOKOUT_HUB_OCR_MAX_DEVICES: z.coerce.number().int().min(1).max(100_000).default(1024),
  }),
  routes: [
    {
      method: 'GET',
      path: '/fleet/ocr',
      errors: ['target_unknown', 'target_not_allowed'],
      summary:
        'Recent plate and sign reads of a device as text: its get_ocr_status reads and those it published on events/ocr, merged per track (the most confident read), decoded with LOOKOUT_HUB_OCR_TOKENIZER_DIR; the cascade state beside them',
      query: OcrQuery,
      response: OcrResponse,
    },
  ],
  async start(ctx) {
    const c = ctx.config;
    const registry = ctx.services.get(DEVICE_REGISTRY);
    const cache = ctx.services.get(BUS_CACHE);
    const tools = ctx.services.get(DEVICE_TOOLS);
    const reads = new DeviceReads(c.LOOKOUT_HUB_OCR_READS_PER_DEVICE, c.LOOKOUT_HUB_OCR_MAX_DEVICES);
    ctx.onStop(cache.on('events/+', (m) => (m.suffix === OCR_EVENT_SUFFIX ? void reads.add(m.deviceId, m.message) : undefined)));

    let decoder: BpeTextDecoder | null = null;
    let tokenizerError: string | null = null;
    if (c.LOOKOUT_HUB_OCR_TOKENIZER_DIR) {
      try {
        decoder = await BpeTextDecoder.load(c.LOOKOUT_HUB_OCR_TOKENIZER_DIR);
        ctx.log.info({ dir: c.LOOKOUT_HUB_OCR_TOKENIZER_DIR, vocab: decoder.vocabSize }, 'OCR tokenizer loaded');
      } catch (err) {
        // The reads still show as token ids; the answer and the health say why there is no text.
        tokenizerError = toLookoutError(err).message;
        ctx.health.set('degraded', tokenizerError);
        ctx.log.error(tokenizerError);
      }
    } else {
      tokenizerError = 'no tokenizer: set LOOKOUT_HUB_OCR_TOKENIZER_DIR to a folder with a TrOCR processor’s vocab.json and merges.txt';
    }

    ctx.routes.handle<z.output<typeof OcrQuery>>('GET', '/fleet/ocr', async ({ query, signal }) => {
      const device = registry.resolve(query.target);
      const outcome = await callOcrStatus(tools, device, AbortSignal.any([signal, AbortSignal.timeout(c.LOOKOUT_HUB_OCR_TOOL_TIMEOUT_MS)]));
      const status = outcome.ok ? outcome.status : null;
      const merged = mergeByTrack([...reads.of(device.deviceId), ...(status?.recent_reads ?? []), ...(status?.best_by_track ?? [])]);
      const shown = merged.slice(0, query.limit ?? 50).map(({ read, reads_merged, last_read_at }) => {
        const decoded = decoder?.decode(read.token_ids);
        return {
          read_id: read.read_id,
          track_id: read.track_id,
          text: decoded?.text ?? null,
          token_ids: read.token_ids,
          unknown_ids: decoded?.unknown_ids ?? [],
          confidence: read.confidence,
          reads_merged,
          class_id: read.class_id,
          class_label: read.class_label,
          det: read.det,
          stop: read.stop,
          frame_time: read.frame_time,
          read_at: read.timestamp,
          last_read_at,
        };
      });
      const deviceVocab = status?.vocab_size ?? null;
      return {
        device_id: device.deviceId,
        online: cache.isOnline(device.deviceId),
        cascade: status?.cascade ?? null,
        cascade_reason: status?.reason ?? null,
        load_report: status?.load_report ?? null,
        status_error: outcome.ok ? null : { code: outcome.code, message: outcome.reason },
        tokenizer: {
          loaded: decoder !== null,
          dir: c.LOOKOUT_HUB_OCR_TOKENIZER_DIR ?? null,
          vocab_size: decoder?.vocabSize ?? null,
          vocab_matches: decoder && deviceVocab !== null ? decoder.vocabSize === deviceVocab : null,
          error: tokenizerError,
        },
        tracks: merged.length,
        reads: shown,
        generated_at: new Date().toISOString(),
      };
    });
  },
});
