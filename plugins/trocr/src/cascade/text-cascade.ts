import { randomBytes } from 'node:crypto';
import { toLookoutError, type Logger, type PluginClock } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { Frame } from '../../../camera/src/service.js';
import type { DetectionPipeline } from '../../../detector/src/service.js';
import type { TrocrConfig } from '../config.js';
import { TROCR } from '../model/trocr-contract.js';
import type { CascadeState, OcrRead, OcrStatus } from '../service.js';
import { OcrWorker } from '../worker/ocr-worker.js';
import type { CropBox, CropRead } from '../worker/worker-protocol.js';
import { CropBudget } from './crop-budget.js';
import { checkStorage, modelFileStates, requirePresent, resolveModelFiles, type FileState, type ModelFiles } from './model-files.js';
import { RateWindow } from './rate-window.js';
import { ReadStore } from './read-store.js';
import { routingOf, type Routing } from './routing.js';
import { textClasses, type TextClass } from './signage-classes.js';
import { snpeRefusal } from './snpe-refusal.js';

export interface CascadeDeps {
  config: TrocrConfig;
  dataDir: string;
  /** The detector's pipeline; undefined when no detector runs. */
  pipeline: DetectionPipeline | undefined;
  publish(read: OcrRead): Promise<void>;
  clock: PluginClock;
  log: Logger;
  health(state: 'ok' | 'degraded', message: string): void;
}

const RECENT_TIMINGS = 32;
const mean = (xs: number[]) => (xs.length === 0 ? null : Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 1000) / 1000);
const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * The precision role's text cascade: plate and sign detections are cropped and read by the TrOCR
 * pair in a worker thread, beside the detector and never in its way (a listener on its results
 * that only copies the frame when it takes crops; busy or over budget, crops are dropped and
 * counted). It fails closed: a pair that does not load, does not fit or crashes leaves the
 * cascade partial (TROCR_DLC_FW_CRASH) while dets go on, and nothing runs the pair again until its
 * files change.
 */
export class TextCascade {
  private state: CascadeState = 'idle';
  private reason: string | null = null;
  private error: { code: string; message: string } | null = null;
  private mismatches: string[] = [];
  private loadReport: 'TROCR_DLC_FW_CRASH' | null = null;
  private readonly routing: Routing;
  private files: ModelFiles | null = null;
  private fileStates: { encoder: FileState; decoder: FileState } | null = null;
  private classes: TextClass[] = [];
  private classIds = new Map<number, TextClass>();
  private worker: OcrWorker | undefined;
  private opened: OcrWorker['opened'] | undefined;
  /** The files the running (or last tried) pair was loaded from. */
  private loadedFingerprint: string | null = null;
  private gate: { closed: boolean; since: string | null } = { closed: false, since: null };
  private readonly counters = { offered: 0, read: 0, dropped_busy: 0, dropped_rate: 0, failed: 0 };
  private readonly budget: CropBudget;
  private readonly rate = new RateWindow();
  private readonly store = new ReadStore();
  private readonly perToken: number[] = [];
  private readonly encoderTimes: number[] = [];
  private readonly nonce = randomBytes(4).toString('hex');
  private sequence = 0;
  private checking = false;
  private stopped = false;
  private loading: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly deps: CascadeDeps) {
    this.routing = routingOf(deps.config);
    this.budget = new CropBudget(deps.config.TROCR_MAX_CROPS_PER_SEC);
  }

  /** Decides whether it runs here; when it does, starts loading the pair (not awaited: the status says loading). */
  start(): void {
    const { pipeline, config, log } = this.deps;
    if (this.routing.idleReason) return this.idle(this.routing.idleReason);
    if (!pipeline) return this.idle('no detector runs on this device (the detector plugin is off or failed): there are no plates or signs to read');
    this.classes = textClasses(pipeline.classes());
    this.classIds = new Map(this.classes.map((c) => [c.id, c]));
    if (this.classes.length === 0) {
      return this.idle(
        'the detector’s weights have no license_plate or sign class (production weights: the production map has none); ' +
          'an Omni package whose labels.json remaps 10 (license_plate) and 11 (sign) is needed',
      );
    }
    try {
      this.files = resolveModelFiles(config, this.deps.dataDir);
    } catch (err) {
      return this.failClosed(err, null);
    }
    this.unsubscribe = pipeline.onResult((dets, frame) => this.onFrame(dets, frame));
    this.deps.clock.setInterval(() => {
      this.recheck().catch((err: unknown) =>
        this.deps.log.warn({ code: toLookoutError(err).code }, `text cascade: the model files could not be checked: ${String(err)}`),
      );
    }, config.TROCR_RECHECK_MS);
    log.info({ classes: this.classes, backend: this.files.backend }, 'text cascade: loading the TrOCR pair');
    this.loading = this.load();
  }

  /** Resolves once the current load attempt is over (tests and the bench wait on it). */
  async settled(): Promise<void> {
    await this.loading;
  }

  private idle(reason: string): void {
    this.state = 'idle';
    this.reason = reason;
    this.deps.health('ok', `text cascade idle: ${reason}`);
    this.deps.log.info(`text cascade idle: ${reason}`);
  }

  private async load(): Promise<void> {
    const files = this.files!;
    if (this.stopped) return;
    this.state = 'loading';
    this.reason = null;
    const states = await modelFileStates(files);
    this.fileStates = states;
    this.loadedFingerprint = states.fingerprint;
    try {
      // The back-end first: files for a runtime that is not here are beside the point.
      if (files.backend === 'snpe') throw snpeRefusal(files);
      await checkStorage(files, states);
      requirePresent(states);
      const worker = await OcrWorker.open({ encoderPath: files.encoder, decoderPath: files.decoder, threads: this.deps.config.TROCR_THREADS });
      if (this.stopped) return void (await worker.close());
      this.worker = worker;
      this.opened = worker.opened;
      this.state = 'running';
      this.error = null;
      this.mismatches = [];
      this.loadReport = null;
      this.gate = { closed: false, since: null };
      this.deps.health('ok', `text cascade running (${files.backend}, ${worker.opened.cropKernel} crops)`);
      this.deps.log.info(
        { encoder: files.encoder, decoder: files.decoder, vocab: worker.opened.vocabSize, crops: worker.opened.cropKernel },
        'text cascade running',
      );
    } catch (err) {
      this.failClosed(err, states.fingerprint);
    }
  }

  /** Partial: the detector goes on, the cascade does not, until the files it failed on change. */
  private failClosed(err: unknown, fingerprint: string | null): void {
    const e = toLookoutError(err);
    const details = e.details as { mismatches?: unknown; load_report?: unknown } | undefined;
    this.state = 'partial';
    this.error = { code: e.code, message: e.message };
    this.mismatches = Array.isArray(details?.mismatches) ? details.mismatches.map(String) : [];
    this.loadReport = e.code === 'trocr.dlc_fw_crash' ? 'TROCR_DLC_FW_CRASH' : null;
    this.reason = `${e.message}; the detector and dets go on without text${fingerprint ? ', and the cascade waits for the model files to change' : ''}`;
    this.gate = { closed: fingerprint !== null, since: new Date(this.deps.clock.now()).toISOString() };
    this.loadedFingerprint = fingerprint;
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    this.deps.health('degraded', `text cascade partial: ${e.message}`);
    this.deps.log.error({ code: e.code, mismatches: this.mismatches }, `text cascade partial: ${e.message}`);
  }

  /** The recompile gate: a failed pair is tried again only once its files changed; a running one is reloaded when they do. */
  private async recheck(): Promise<void> {
    if (this.checking || this.stopped || !this.files || (this.state !== 'partial' && this.state !== 'running')) return;
    if (this.state === 'partial' && !this.gate.closed) return;
    this.checking = true;
    try {
      const states = await modelFileStates(this.files);
      if (this.stopped || states.fingerprint === this.loadedFingerprint || (this.state !== 'partial' && this.state !== 'running')) return;
      this.deps.log.info({ state: this.state }, 'text cascade: the model files changed, loading them');
      const worker = this.worker;
      this.worker = undefined;
      await worker?.close();
      this.loading = this.load();
      await this.loading;
    } finally {
      this.checking = false;
    }
  }

  /** On every detector result: picks plate and sign boxes; never waits for the cascade. */
  private onFrame(dets: Detection[], frame: Frame): void {
    const worker = this.worker;
    if (this.state !== 'running' || !worker) return;
    const { TROCR_MIN_CONFIDENCE: minP, TROCR_MIN_BOX_PX: minPx } = this.deps.config;
    const candidates = dets.filter((d) => this.classIds.has(d.c) && d.p >= minP && d.b[2] - d.b[0] >= minPx && d.b[3] - d.b[1] >= minPx);
    if (candidates.length === 0) return;
    this.counters.offered += candidates.length;
    if (worker.busy) {
      this.counters.dropped_busy += candidates.length;
      return;
    }
    const granted = this.budget.take(candidates.length, this.deps.clock.now());
    this.counters.dropped_rate += candidates.length - granted;
    if (granted === 0) return;
    const chosen = [...candidates].sort((a, b) => b.p - a.p).slice(0, granted);
    const boxes = chosen.map((d) => [d.b[0], d.b[1], d.b[2], d.b[3]] as CropBox);
    worker
      .read(frame, boxes)
      .then(
        (reads) => this.deliver(chosen, frame, reads),
        (err: unknown) => {
          this.counters.failed += chosen.length;
          // A read that fails after a reload or a stop belongs to a worker already let go.
          if (this.worker === worker) this.failClosed(err, this.loadedFingerprint);
        },
      )
      .catch((err: unknown) => this.deps.log.error({ code: toLookoutError(err).code }, `text cascade: a read was lost: ${String(err)}`));
  }

  private deliver(dets: Detection[], frame: Frame, reads: CropRead[]): void {
    const now = this.deps.clock.now();
    reads.forEach((r, i) => {
      const d = dets[i];
      const perToken = r.decoderMs / r.steps;
      const read: OcrRead = {
        type: 'ocr',
        timestamp: new Date(now).toISOString(),
        read_id: `${this.nonce}-${++this.sequence}`,
        frame_time: new Date(frame.timestampMs).toISOString(),
        frame_index: frame.index,
        track_id: d.track_id ?? null,
        class_id: d.c,
        class_label: this.classIds.get(d.c)!.label,
        det: { c: d.c, p: d.p, b: d.b.slice(0, 4) },
        crop: { x: r.rect[0], y: r.rect[1], width: r.rect[2], height: r.rect[3] },
        token_ids: r.tokens,
        stop: r.stop,
        confidence: round3(r.confidence),
        steps: r.steps,
        encoder_ms: round3(r.encoderMs),
        decoder_ms: round3(r.decoderMs),
        decoder_ms_per_token: round3(perToken),
      };
      this.store.add(read);
      this.counters.read++;
      this.rate.mark(now);
      push(this.perToken, perToken);
      push(this.encoderTimes, r.encoderMs);
      this.deps.publish(read).catch((err: unknown) => this.deps.log.warn({ code: toLookoutError(err).code }, `an OCR read was not published: ${String(err)}`));
    });
  }

  status(): OcrStatus {
    const files = this.files;
    const file = (which: 'encoder' | 'decoder') => ({
      path: this.fileStates?.[which].path ?? files?.[which] ?? '',
      bytes: this.fileStates?.[which].bytes ?? null,
    });
    return {
      cascade: this.state,
      reason: this.reason,
      load_report: this.loadReport,
      error: this.error,
      mismatches: this.mismatches,
      routing: { svc_device_id: this.routing.svc_device_id, precision_role: this.routing.precision_role, encode_only: this.routing.encode_only },
      backend: files?.backend ?? this.deps.config.TROCR_BACKEND ?? 'onnx',
      models: { encoder: file('encoder'), decoder: file('decoder') },
      vocab_size: this.opened?.vocabSize ?? null,
      crop_kernel: this.opened?.cropKernel ?? null,
      classes: this.classes,
      recompile_gate: { ...this.gate },
      limits: { max_crops_per_sec: this.deps.config.TROCR_MAX_CROPS_PER_SEC, crop_size: TROCR.CROP_SIZE, max_seq_len: TROCR.MAX_SEQ_LEN },
      crops_per_sec: round3(this.rate.rate(this.deps.clock.now())),
      crops: { ...this.counters },
      decoder_ms_per_token: mean(this.perToken),
      encoder_ms: mean(this.encoderTimes),
      recent_reads: this.store.recentReads(),
      best_by_track: this.store.bestByTrack(),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    await this.loading?.catch(() => undefined);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.close();
  }
}

function push(list: number[], value: number): void {
  list.push(value);
  if (list.length > RECENT_TIMINGS) list.shift();
}
