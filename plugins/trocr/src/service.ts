import { z } from 'zod';
import { TimestampSchema } from 'lookout/core/contracts';

/** The topic suffix of the cascade's reads: `devices/<id>/events/ocr` (the bus table's `events/+`). */
export const OCR_EVENT_SUFFIX = 'events/ocr';

/**
 * idle: not meant to run here (routing, encode-only, no detector, or no plate or sign class), says why;
 * loading: the models are being checked and loaded; running: reading crops;
 * partial: failed closed (TROCR_DLC_FW_CRASH, too little storage, the back-end missing): the detector
 * and dets go on, the text does not, until the model files change.
 */
export const CASCADE_STATES = ['idle', 'loading', 'running', 'partial'] as const;
export type CascadeState = (typeof CASCADE_STATES)[number];

export const STOP_REASONS = ['eos', 'pad', 'max_tokens'] as const;

const Id = z.number().int().nonnegative();

/** A timestamp of bounded length: ISO 8601 allows any number of fraction digits, a stored read must not. */
const ReadTime = TimestampSchema.max(40);

/**
 * One read: token ids of one crop, with the detection, track and frame it came from. Text is decoded
 * on the host only. Strict in size (the hub keeps hundreds of reads per device from the bus): unknown
 * keys are stripped, not kept, and every string and array is bounded.
 */
export const OcrReadSchema = z.object({
  type: z.literal('ocr'),
  timestamp: ReadTime.describe('when the read finished'),
  read_id: z.string().min(1).max(64).describe('unique on the device: boot nonce and sequence'),
  frame_time: ReadTime.describe('the time of the frame the crop was taken from'),
  frame_index: Id,
  track_id: z.number().int().nullable().describe('the tracker’s id (layer 2); null without it'),
  class_id: Id.describe('as dets carry it (after the package’s remap)'),
  class_label: z.enum(['license_plate', 'sign']),
  det: z.object({ c: Id, p: z.number().min(0).max(1), b: z.array(z.number()).length(4).describe('x1, y1, x2, y2 in frame pixels') }),
  crop: z.object({ x: Id, y: Id, width: z.number().int().positive(), height: z.number().int().positive() }).describe('the frame pixels taken'),
  token_ids: z.array(Id).max(20).describe('without START and without the EOS or PAD that ended the read'),
  stop: z.enum(STOP_REASONS),
  confidence: z.number().min(0).max(1).describe('geometric mean of the chosen tokens’ probabilities'),
  steps: z.number().int().min(1).max(20),
  encoder_ms: z.number().nonnegative(),
  decoder_ms: z.number().nonnegative(),
  decoder_ms_per_token: z.number().nonnegative(),
});
export type OcrRead = z.infer<typeof OcrReadSchema>;

/** Reads a status may list in each of its lists. */
const MAX_STATUS_READS = 256;

const ErrorSchema = z.object({ code: z.string(), message: z.string() });

const ModelFileSchema = z.object({
  path: z.string(),
  bytes: z.number().int().nonnegative().nullable().describe('null when the file is missing'),
});

/** get_ocr_status */
export const OcrStatusSchema = z.looseObject({
  cascade: z.enum(CASCADE_STATES),
  /** Why idle or partial; null while running. */
  reason: z.string().nullable(),
  /** The spec's load report: TROCR_DLC_FW_CRASH when a graph crashed or does not fit; null otherwise. */
  load_report: z.literal('TROCR_DLC_FW_CRASH').nullable(),
  error: ErrorSchema.nullable(),
  /** Each way the graphs differ from the contract, when that is why the cascade is partial. */
  mismatches: z.array(z.string()),
  routing: z.object({ svc_device_id: z.string().nullable(), precision_role: z.boolean(), encode_only: z.boolean() }),
  backend: z.enum(['onnx', 'snpe']),
  models: z.object({ encoder: ModelFileSchema, decoder: ModelFileSchema }),
  /** Vocabulary size read from the decoder's logits; null before load or when symbolic. */
  vocab_size: z.number().int().positive().nullable(),
  /** Which crop kernel the worker runs: the native addon or its TypeScript twin. */
  crop_kernel: z.enum(['native', 'typescript']).nullable(),
  /** The dets classes cascaded (license_plate, sign through the remap). */
  classes: z.array(z.object({ id: Id, label: z.enum(['license_plate', 'sign']) })),
  /** Waiting for the model files to change before trying again (fail closed, a recompile gate). */
  recompile_gate: z.object({ closed: z.boolean(), since: TimestampSchema.nullable() }),
  limits: z.object({ max_crops_per_sec: z.number(), crop_size: z.number().int(), max_seq_len: z.number().int() }),
  crops_per_sec: z.number().nonnegative(),
  crops: z.object({
    offered: z.number().int().nonnegative(),
    read: z.number().int().nonnegative(),
    dropped_busy: z.number().int().nonnegative().describe('the cascade was reading: never waits, the detector goes on'),
    dropped_rate: z.number().int().nonnegative().describe('over TROCR_MAX_CROPS_PER_SEC'),
    failed: z.number().int().nonnegative(),
  }),
  /** Mean decoder time per token over the recent reads; null before the first. */
  decoder_ms_per_token: z.number().nonnegative().nullable(),
  encoder_ms: z.number().nonnegative().nullable(),
  /** Newest first. (The device keeps 32; the bound leaves room for a newer device keeping more.) */
  recent_reads: z.array(OcrReadSchema).max(MAX_STATUS_READS),
  /** The most confident read of each recent track, newest track first. (The device keeps 64.) */
  best_by_track: z.array(OcrReadSchema).max(MAX_STATUS_READS),
});
export type OcrStatus = z.infer<typeof OcrStatusSchema>;
