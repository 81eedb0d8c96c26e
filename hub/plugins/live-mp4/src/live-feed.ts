import type { ConnectionOptions } from 'node:tls';
import { PassThrough } from 'node:stream';
import { LookoutError } from 'lookout/core';
import { codecOf, fragment, initSegment } from './fmp4-muxer.js';
import { H264Depacketizer, type AccessUnit } from './h264-depacketizer.js';
import { spsSize } from './h264-sps.js';
import { rtspPlay, type RtspPlaying, type SenderReport } from './rtsp-client.js';
import { RTSP_FAILED, rtspFailure } from './rtsp-failure.js';
import { SampleClock } from './sample-clock.js';

export interface LiveFeedOptions {
  deviceId: string;
  url: string;
  /** With an rtsps:// url: how the camera is verified (see RtspPlayOptions.tls). */
  tls?: ConnectionOptions;
  user?: string;
  password?: string;
  connectTimeoutMs: number;
  /** Unread bytes a viewer may lag behind before it is cut off. */
  maxViewerBufferBytes: number;
  /** Bound on the pictures kept since the latest keyframe (what a new viewer starts with). */
  maxGopBytes: number;
  /** How long the feed stays open with no viewer. */
  idleMs: number;
  onClose(feed: LiveFeed, error: Error | undefined): void;
}

interface Viewer {
  stream: PassThrough;
}

const NAL_SEI_OR_DATA = new Set([1, 2, 3, 4, 5, 6]);

/**
 * One device's H.264 preview, read once over RTSP and remuxed (never decoded) into fragmented MP4
 * for every viewer: each new viewer gets the init segment and the pictures since the latest
 * keyframe, then every new picture. A viewer that reads too slowly is cut off; with no viewer left
 * the feed closes after `idleMs`.
 */
export class LiveFeed {
  private rtsp: RtspPlaying | undefined;
  private readonly viewers = new Set<Viewer>();
  private sps: Buffer | undefined;
  private pps: Buffer | undefined;
  private init: Buffer | undefined;
  private codec: string | undefined;
  private gop: Buffer[] = [];
  private gopBytes = 0;
  private sequence = 1;
  /** The pictures' times on the nominal frame rate (MSE drops pictures on jittery ones). */
  private readonly clock = new SampleClock();
  /** The camera's latest RTCP sender report: its RTP times as capture times (each fragment's prft). */
  private senderReport: SenderReport | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readyWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  private closed = false;
  private failure: Error | undefined;
  /** Requests waiting in ready(). */
  private waiting = 0;
  readonly started: Promise<void>;
  fragments = 0;

  constructor(private readonly o: LiveFeedOptions) {
    const depacketizer = new H264Depacketizer((au) => this.onAccessUnit(au));
    this.started = rtspPlay({
      url: o.url,
      ...(o.tls ? { tls: o.tls } : {}),
      ...(o.user !== undefined ? { user: o.user } : {}),
      ...(o.password !== undefined ? { password: o.password } : {}),
      timeoutMs: o.connectTimeoutMs,
      // The parameter sets and the frame rate before the first picture: the camera's first GOP comes
      // in one burst right after PLAY, and placed on a rate not yet known it would stretch (or
      // squeeze) the first second of the timeline.
      onDescribe: (sdp) => this.fromSdp(sdp),
      onRtp: (p) => depacketizer.push(p),
      onSenderReport: (r) => (this.senderReport = r),
      onClose: (err) => this.close(err ?? new LookoutError(RTSP_FAILED, `the camera ended the RTSP stream of ${o.deviceId}`, { details: { cause: 'closed' } })),
    }).then(
      (playing) => {
        if (this.closed) return playing.close();
        this.rtsp = playing;
      },
      (err: unknown) => this.close(rtspFailure(err, `the RTSP stream of ${o.deviceId} failed`)),
    );
    this.armIdle();
  }

  get viewerCount(): number {
    return this.viewers.size;
  }

  /**
   * Resolves with the codecs parameter once the first keyframe made the init segment. The feed
   * stays open while a request waits here (its idle timer would otherwise close it under the request).
   */
  async ready(timeoutMs: number, signal: AbortSignal): Promise<string> {
    this.waiting++;
    clearTimeout(this.idleTimer);
    try {
      return await this.untilKeyframe(timeoutMs, signal);
    } finally {
      this.waiting--;
      if (this.viewers.size === 0 && this.waiting === 0) this.armIdle();
    }
  }

  private async untilKeyframe(timeoutMs: number, signal: AbortSignal): Promise<string> {
    if (this.codec && this.gop.length > 0) return this.codec;
    if (this.closed) throw this.failure ?? new LookoutError('live_stream_unavailable', 'the live feed is closed');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => done(new LookoutError('live_stream_unavailable', `no keyframe from ${this.o.deviceId}'s H.264 preview within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onAbort = () => done(new LookoutError('live_stream_unavailable', 'the request was cancelled'));
      const waiter = { resolve: () => done(undefined), reject: (e: Error) => done(e) };
      const done = (err: Error | undefined) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.readyWaiters = this.readyWaiters.filter((w) => w !== waiter);
        if (err) reject(err);
        else resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.readyWaiters.push(waiter);
    });
    return this.codec!;
  }

  /** A new viewer's stream: init segment, the current GOP, then live fragments. */
  addViewer(): PassThrough {
    if (this.closed) throw this.failure ?? new LookoutError('live_stream_unavailable', 'the live feed closed');
    const stream = new PassThrough();
    const viewer = { stream };
    this.viewers.add(viewer);
    clearTimeout(this.idleTimer);
    const remove = () => {
      if (!this.viewers.delete(viewer)) return;
      if (this.viewers.size === 0 && this.waiting === 0) this.armIdle();
    };
    stream.on('close', remove);
    stream.on('error', remove);
    if (this.init) stream.write(this.init);
    for (const f of this.gop) stream.write(f);
    return stream;
  }

  close(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    clearTimeout(this.idleTimer);
    this.rtsp?.close();
    for (const w of this.readyWaiters) w.reject(error ?? new LookoutError('live_stream_unavailable', 'the live feed closed'));
    this.readyWaiters = [];
    // Viewers see their stream end; the console reconnects and gets a fresh feed.
    for (const v of this.viewers) v.stream.end();
    this.viewers.clear();
    this.o.onClose(this, error);
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.viewers.size === 0 && this.waiting === 0) this.close();
    }, this.o.idleMs);
  }

  /** sprop-parameter-sets and the frame rate from the SDP: the init segment can be made before an in-band SPS. */
  private fromSdp(sdp: string): void {
    const sets = /sprop-parameter-sets=([A-Za-z0-9+/=]+),([A-Za-z0-9+/=]+)/.exec(sdp);
    if (sets) {
      this.sps ??= Buffer.from(sets[1], 'base64');
      this.pps ??= Buffer.from(sets[2], 'base64');
    }
    this.clock.setRate(Number(/^a=framerate:([\d.]+)/m.exec(sdp)?.[1]));
  }

  /** The picture's capture time (Unix ms) from the camera's sender report; undefined before the first one. */
  private captureMs(rtpTime: number): number | undefined {
    const r = this.senderReport;
    if (!r) return undefined;
    // The signed 32-bit distance: a picture may be a little before the report as well as after it.
    return r.wallMs + ((rtpTime - r.rtpTime) | 0) / 90;
  }

  private onAccessUnit(au: AccessUnit): void {
    if (this.closed) return;
    const sps = au.nals.find((n) => (n[0] & 0x1f) === 7);
    const pps = au.nals.find((n) => (n[0] & 0x1f) === 8);
    if (sps && this.sps && !sps.equals(this.sps) && this.init) {
      // New parameter sets (the profile changed size): viewers need a new init segment, so they reconnect.
      return this.close(new LookoutError('live_stream_unavailable', 'the stream changed its parameter sets'));
    }
    if (sps) this.sps = sps;
    if (pps) this.pps = pps;
    if (!this.init) {
      if (!au.keyframe || !this.sps || !this.pps) return;
      const size = spsSize(this.sps) ?? { width: 0, height: 0 };
      this.init = initSegment(this.sps, this.pps, size.width, size.height);
      this.codec = codecOf(this.sps);
    }
    const { decodeTime, duration } = this.clock.place(au.rtpTime);
    const nals = au.nals.filter((n) => NAL_SEI_OR_DATA.has(n[0] & 0x1f));
    const frag = fragment(this.sequence++, decodeTime, duration, nals, au.keyframe, this.captureMs(au.rtpTime));
    this.fragments++;
    if (au.keyframe) {
      this.gop = [];
      this.gopBytes = 0;
    }
    if (this.gopBytes + frag.length <= this.o.maxGopBytes) {
      this.gop.push(frag);
      this.gopBytes += frag.length;
    }
    for (const v of this.viewers) {
      if (v.stream.readableLength + v.stream.writableLength > this.o.maxViewerBufferBytes) v.stream.end();
      else v.stream.write(frag);
    }
    if (au.keyframe) for (const w of [...this.readyWaiters]) w.resolve();
  }
}
