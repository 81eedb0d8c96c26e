import type { Logger } from 'lookout/core';
import type { FrameSource } from '../../camera/src/service.js';
import { FramePacer } from './frame-pacer.js';
import { GopBuffer } from './gop-buffer.js';
import { H264Output } from './h264-output.js';
import { PictureParser } from './picture-parser.js';
import { RateWindow } from './rate-window.js';
import type { EncodedPicture, EncodedVideo, EncoderExit, EncoderInfo, EncoderStats, H264Video } from './service.js';
import { sameSettings, type EncoderExitInfo, type EncoderSettings, type VideoEncoder } from './video-encoder.js';

export interface PipelineOptions {
  source: FrameSource;
  encoder: VideoEncoder;
  settings: EncoderSettings;
  gopMaxBytes: number;
  statsWindowMs: number;
  restart: { minMs: number; maxMs: number };
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Told when the encoder goes down (degraded, with why) and when it produces again (ok). */
  onHealth?: (state: 'ok' | 'degraded', message: string) => void;
  /** False: h264() answers null even when the encoder could make H.264 (ENCODE_H264=off). Default true. */
  h264?: boolean;
}

/** A run that lasted this long was healthy: the next exit restarts after the shortest wait again. */
const HEALTHY_RUN_MS = 30_000;

/**
 * The device's one encode: frames from the source, paced at the profile's fps, into the encoder;
 * its byte stream parsed into pictures that fan out to every consumer; the latest GOP kept; rates
 * measured; an encoder that exits is restarted with a doubling wait (the device stays up, the
 * encoder's health says why it is down). Implements the EncodedVideo service.
 */
export class EncodePipeline implements EncodedVideo {
  readonly codec = 'hevc' as const;
  private settings: EncoderSettings;
  private readonly listeners = new Set<(p: EncodedPicture) => void>();
  private readonly exitListeners = new Set<(e: EncoderExit) => void>();
  private readonly gopBuffer: GopBuffer;
  private readonly rate: RateWindow;
  private readonly pacer: FramePacer;
  private parser: PictureParser | undefined;
  /** The H.264 output's parser in the current run (undefined while nobody asked for H.264). */
  private h264Parser: PictureParser | undefined;
  private h264Wanted = false;
  private h264Index = 0;
  private readonly h264Out: H264Output;
  private frames = 0;
  private dropped = 0;
  private index = 0;
  private generation = 0;
  private restarts = 0;
  private failures = 0;
  private runStartedAt = 0;
  private reading = false;
  private degraded = false;
  private exit: EncoderExit | null = null;
  private restartTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Settings changes and stops, one at a time. */
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly o: PipelineOptions) {
    this.settings = o.settings;
    this.gopBuffer = new GopBuffer(o.gopMaxBytes);
    this.rate = new RateWindow(o.statsWindowMs);
    this.pacer = new FramePacer(
      () => this.tick(),
      (n) => (this.dropped += n),
    );
    this.h264Out = new H264Output(this, o.gopMaxBytes, o.log);
  }

  get width(): number {
    return this.settings.width;
  }
  get height(): number {
    return this.settings.height;
  }
  get fps(): number {
    return this.settings.fps;
  }
  get gop(): number {
    return this.settings.gop;
  }
  get running(): boolean {
    return this.o.encoder.running;
  }

  currentSettings(): EncoderSettings {
    return { ...this.settings };
  }

  start(): void {
    this.stopped = false;
    this.startEncoder();
    this.pacer.start(this.settings.fps);
  }

  /** A new profile: the running encoder finishes its pictures and a new one starts with the settings. */
  setSettings(settings: EncoderSettings): Promise<void> {
    const run = this.queue.then(async () => {
      // Not running (not started yet, or stopped): the next start takes them.
      if (this.stopped) this.settings = settings;
      if (this.stopped || sameSettings(settings, this.settings)) return;
      this.o.log?.info({ from: this.settings, to: settings }, 'encoder settings changed: restarting the encoder');
      this.clearRestart();
      await this.stopEncoder();
      this.settings = settings;
      this.startEncoder();
      this.pacer.start(settings.fps);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  stop(): Promise<void> {
    const run = this.queue.then(async () => {
      this.stopped = true;
      this.pacer.stop();
      this.clearRestart();
      await this.stopEncoder();
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  subscribe(listener: (picture: EncodedPicture) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  latestGop(): EncodedPicture[] {
    return this.gopBuffer.snapshot();
  }

  stats(): EncoderStats {
    const { fps, kbps } = this.rate.rates();
    return { frames: this.frames, dropped: this.dropped, bitrate_kbps: kbps, encode_fps: fps };
  }

  h264(): H264Video | null {
    if (!this.o.encoder.h264Output || this.o.h264 === false) return null;
    if (!this.h264Wanted) {
      this.h264Wanted = true;
      // The running encoder was started without the second output: the next run has it.
      if (!this.stopped) this.restartWithH264();
    }
    return this.h264Out;
  }

  lastExit(): EncoderExit | null {
    return this.exit;
  }

  onExit(listener: (exit: EncoderExit) => void): () => void {
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  encoder(): EncoderInfo {
    return { name: this.o.encoder.name, pid: this.o.encoder.pid, generation: this.generation, restarts: this.restarts };
  }

  private startEncoder(): void {
    const generation = ++this.generation;
    const parser = new PictureParser((au, capturedAtMs) => this.emit({ ...au, index: this.index++, capturedAtMs, generation }));
    this.parser = parser;
    const h264Parser = this.h264Wanted
      ? new PictureParser((au, capturedAtMs) => this.h264Out.emit({ ...au, index: this.h264Index++, capturedAtMs, generation }), Date.now, 'h264')
      : undefined;
    this.h264Parser = h264Parser;
    this.h264Out.clear();
    this.gopBuffer.clear();
    this.rate.reset();
    this.runStartedAt = Date.now();
    const { source } = this.o;
    try {
      this.o.encoder.start(
        this.settings,
        { width: source.width, height: source.height, pixelFormat: 'bgr24' },
        {
          onData: (bytes) => {
            if (this.parser === parser) parser.push(bytes);
          },
          ...(h264Parser
            ? {
                onH264Data: (bytes: Buffer) => {
                  if (this.h264Parser === h264Parser) h264Parser.push(bytes);
                },
              }
            : {}),
          onExit: (info) => this.exited(parser, info),
        },
      );
    } catch (err) {
      this.exited(parser, { code: null, signal: null, message: `the encoder could not start: ${(err as Error).message}` });
    }
  }

  private async stopEncoder(): Promise<void> {
    await this.o.encoder.stop();
    this.parser?.flush();
    this.parser = undefined;
    this.h264Parser?.flush();
    this.h264Parser = undefined;
  }

  private restartWithH264(): void {
    this.queue = this.queue
      .then(async () => {
        if (this.stopped || this.h264Parser) return;
        this.o.log?.info({}, 'H.264 asked for: restarting the encoder with its second output');
        this.clearRestart();
        await this.stopEncoder();
        this.startEncoder();
        this.pacer.start(this.settings.fps);
      })
      .catch(() => undefined);
  }

  private tick(): void {
    const parser = this.parser;
    const h264Parser = this.h264Parser;
    if (!this.o.encoder.running || !parser || this.reading) {
      this.dropped++;
      return;
    }
    this.reading = true;
    this.o.source
      .read()
      .then((frame) => {
        if (this.parser !== parser || !this.o.encoder.feed(frame.data)) this.dropped++;
        else {
          parser.frameFed(frame.timestampMs);
          h264Parser?.frameFed(frame.timestampMs);
        }
      })
      .catch((err: Error) => {
        this.dropped++;
        this.o.log?.warn({ err: err.message }, 'frame not read');
      })
      .finally(() => (this.reading = false));
  }

  private emit(picture: EncodedPicture): void {
    this.frames++;
    this.rate.add(picture.data.length);
    this.gopBuffer.add(picture);
    if (this.degraded) {
      this.degraded = false;
      this.o.onHealth?.('ok', `encoding ${this.settings.width}x${this.settings.height} at ${this.settings.fps} fps`);
    }
    for (const listener of [...this.listeners]) {
      try {
        listener(picture);
      } catch (err) {
        // A consumer's failure is its own: the others and the encoder go on.
        this.o.log?.error({ err: (err as Error).message }, 'encoded picture listener failed');
      }
    }
  }

  private exited(parser: PictureParser, info: EncoderExitInfo): void {
    if (this.parser === parser) {
      parser.flush();
      this.parser = undefined;
      this.h264Parser?.flush();
      this.h264Parser = undefined;
    }
    if (Date.now() - this.runStartedAt >= HEALTHY_RUN_MS) this.failures = 0;
    const waitMs = Math.min(this.o.restart.maxMs, this.o.restart.minMs * 2 ** this.failures);
    this.failures++;
    const exit: EncoderExit = { at: new Date().toISOString(), message: info.message };
    this.exit = exit;
    this.degraded = true;
    this.o.log?.error({ code: info.code, signal: info.signal, restartInMs: waitMs }, `encoder stopped: ${info.message}`);
    this.o.onHealth?.('degraded', `encoder stopped at ${exit.at}: ${info.message}; restarting in ${Math.round(waitMs)} ms`);
    for (const listener of [...this.exitListeners]) {
      try {
        listener(exit);
      } catch (err) {
        this.o.log?.error({ err: (err as Error).message }, 'encoder exit listener failed');
      }
    }
    if (this.stopped) return;
    this.clearRestart();
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopped || this.o.encoder.running) return;
      this.restarts++;
      this.startEncoder();
    }, waitMs);
  }

  private clearRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }
}
