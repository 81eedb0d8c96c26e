import { jpegFromHevc } from 'lookout/lib/media';
import { LookoutError, toLookoutError } from 'lookout/core';
import { type LiveJpegResult } from 'lookout/core/contracts';
import { jpegSize } from './jpeg-size.js';
import type { EncodedVideo } from './service.js';

export interface LiveJpegOptions {
  /** Waiting in the queue plus decoding. */
  timeoutMs: number;
  /** Calls waiting behind the one decoding; more are refused (device_busy). */
  maxWaiting: number;
}

/**
 * get_live_jpeg: the newest picture of the live stream as a JPEG, decoded from the latest GOP (the
 * keyframe and every picture after it). One decode at a time (each is an ffmpeg run), a few callers
 * wait, the rest are told to come back; the last answer is reused while no newer picture exists.
 */
export class LiveJpeg {
  private busy = false;
  private readonly waiting: (() => void)[] = [];
  private last: { key: string; result: LiveJpegResult } | undefined;

  constructor(
    private readonly video: EncodedVideo,
    private readonly o: LiveJpegOptions,
  ) {}

  async take(args: { w: number; q: number }, callSignal?: AbortSignal): Promise<LiveJpegResult> {
    this.available();
    const signal = callSignal ? AbortSignal.any([callSignal, AbortSignal.timeout(this.o.timeoutMs)]) : AbortSignal.timeout(this.o.timeoutMs);
    await this.turn(signal);
    try {
      const gop = this.video.latestGop();
      if (gop.length === 0) this.available();
      const newest = gop[gop.length - 1];
      const key = `${newest.generation}/${newest.index}/${args.w}/${args.q}`;
      if (this.last?.key === key) return this.last.result;
      const stream = Buffer.concat(gop.map((p) => p.data));
      let jpeg: Buffer;
      try {
        jpeg = await jpegFromHevc(stream, { width: args.w, quality: args.q, timeoutMs: this.o.timeoutMs, signal });
      } catch (err) {
        const e = toLookoutError(err);
        throw new LookoutError('live_stream_unavailable', `the live picture could not be decoded: ${e.message}`, { cause: err });
      }
      const size = jpegSize(jpeg) ?? { width: args.w, height: Math.round((args.w * this.video.height) / this.video.width) };
      const result: LiveJpegResult = {
        content_type: 'image/jpeg',
        jpeg_base64: jpeg.toString('base64'),
        width: size.width,
        height: size.height,
        bytes: jpeg.length,
        captured_at: new Date(newest.capturedAtMs).toISOString(),
      };
      this.last = { key, result };
      return result;
    } finally {
      this.release();
    }
  }

  /** Throws when there is nothing to decode: the encoder is down, or has no keyframe out yet. */
  private available(): void {
    if (!this.video.running) {
      const exit = this.video.lastExit();
      throw new LookoutError(
        'encoder_unavailable',
        exit ? `the encoder is not running (it stopped at ${exit.at}: ${exit.message})` : 'the encoder is not running',
      );
    }
    if (this.video.latestGop().length === 0) throw new LookoutError('live_stream_unavailable', 'the encoder has produced no keyframe yet');
  }

  private turn(signal: AbortSignal): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.o.maxWaiting) {
      return Promise.reject(new LookoutError('device_busy', `get_live_jpeg is decoding and ${this.waiting.length} calls wait; retry later`));
    }
    return new Promise<void>((resolve, reject) => {
      const go = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new LookoutError('live_stream_unavailable', `get_live_jpeg waited ${this.o.timeoutMs} ms for its turn`));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(go);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  }
}
