import { hubFetch, q } from './api.js';
import { CaptureClock, type ShownPicture } from './capture-clock.js';

export type LiveState = 'connecting' | 'playing' | 'retrying' | 'unsupported';

/** Seconds behind the newest picture the player aims at: room for the pictures' arrival jitter. */
const TARGET_LAG_S = 0.6;
/** Seconds behind past which the player jumps forward (a live view must not drift); below it, it plays a little faster. */
const MAX_LAG_S = 4;
/** How much faster (or slower) than real time the player goes to come back to the target lag. */
const MAX_RATE_STEP = 0.15;
/** Seconds of played video kept in the SourceBuffer. */
const KEEP_S = 20;

/**
 * The device's H.264 preview, remuxed by the hub into fragmented MP4 (GET /stream/live/mp4), played
 * through Media Source Extensions: read with fetch (the token goes in a header), appended as it
 * comes, kept near the live edge, and reconnected when the stream ends.
 */
export class LivePlayer {
  private controller: AbortController | undefined;
  private stopped = false;
  private objectUrl: string | undefined;
  /** The capture times of the stream playing now (its prft boxes). */
  private captures = new CaptureClock();
  private frameCallback: number | undefined;
  fragments = 0;

  /** `onPicture` hears of every picture put on screen, with its capture time when the stream says it. */
  constructor(
    private readonly video: HTMLVideoElement,
    private readonly deviceId: string,
    private readonly onState: (state: LiveState, detail?: string) => void,
    private readonly onPicture?: (shown: ShownPicture | undefined) => void,
  ) {
    if (onPicture) this.watchPictures(onPicture);
    void this.loop();
  }

  /**
   * Each picture presented, by its own media time (requestVideoFrameCallback), or the current time
   * at each timeupdate where the browser has no frame callbacks.
   */
  private watchPictures(onPicture: (shown: ShownPicture | undefined) => void): void {
    const video = this.video;
    if (typeof video.requestVideoFrameCallback === 'function') {
      const next = (_now: number, frame: VideoFrameCallbackMetadata) => {
        if (this.stopped) return;
        onPicture(this.captures.shownAt(frame.mediaTime));
        this.frameCallback = video.requestVideoFrameCallback(next);
      };
      this.frameCallback = video.requestVideoFrameCallback(next);
    } else video.addEventListener('timeupdate', () => onPicture(this.captures.shownAt(video.currentTime)));
  }

  stop(): void {
    this.stopped = true;
    if (this.frameCallback !== undefined) this.video.cancelVideoFrameCallback(this.frameCallback);
    this.controller?.abort();
    this.video.removeAttribute('src');
    this.video.load();
    if (this.objectUrl) URL.revokeObjectURL(this.objectUrl);
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      this.onState(failures === 0 ? 'connecting' : 'retrying');
      try {
        await this.playOnce();
        failures = 0;
      } catch (err) {
        if (this.stopped) return;
        if (err instanceof Unsupported) return this.onState('unsupported', err.message);
        failures++;
        this.onState('retrying', err instanceof Error ? err.message : String(err));
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, Math.min(10_000, 1000 * 2 ** Math.min(failures, 3))));
    }
  }

  private async playOnce(): Promise<void> {
    this.controller = new AbortController();
    const res = await hubFetch(`/stream/live/mp4?target=${q(this.deviceId)}`, { signal: this.controller.signal });
    if (!res.ok || !res.body) {
      let message = `the hub answered ${res.status}`;
      try {
        message = ((await res.json()) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        /* not JSON */
      }
      throw new Error(message);
    }
    const mime = res.headers.get('content-type') ?? '';
    if (typeof MediaSource === 'undefined' || !MediaSource.isTypeSupported(mime))
      throw new Unsupported(`this browser cannot play ${mime} through Media Source Extensions`);
    const source = new MediaSource();
    const captures = new CaptureClock();
    this.captures = captures;
    if (this.objectUrl) URL.revokeObjectURL(this.objectUrl);
    this.objectUrl = URL.createObjectURL(source);
    this.video.src = this.objectUrl;
    await new Promise((resolve) => source.addEventListener('sourceopen', resolve, { once: true }));
    const buffer = source.addSourceBuffer(mime);
    buffer.mode = 'segments';
    const queue: Uint8Array<ArrayBuffer>[] = [];
    const pump = () => {
      if (buffer.updating || queue.length === 0 || source.readyState !== 'open') return;
      const chunk = queue.length === 1 ? queue.shift()! : concat(queue.splice(0));
      try {
        buffer.appendBuffer(chunk);
      } catch (err) {
        // QuotaExceeded: drop what was played and go on.
        if (this.video.currentTime > 2) buffer.remove(0, this.video.currentTime - 1);
        console.warn('appendBuffer', err);
      }
    };
    buffer.addEventListener('updateend', () => {
      // A source replaced (a reconnect gives the video a new one) or ended has removed its buffer, and
      // reading the buffer then throws: an append finishing after that has nothing left to keep live.
      if (source.readyState !== 'open') return;
      this.keepLive(buffer);
      pump();
    });
    const reader = res.body.getReader();
    let playing = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done || this.stopped) break;
      queue.push(value);
      captures.push(value);
      this.fragments++;
      pump();
      if (!playing && source.readyState === 'open' && buffer.buffered.length > 0) {
        playing = true;
        this.video.currentTime = buffer.buffered.start(0);
        void this.video.play().catch(() => undefined);
        this.onState('playing');
      }
    }
    throw new Error('the live stream ended');
  }

  /**
   * Keeps the video near the live edge without skipping pictures: a little faster or slower than
   * real time while it is off the target lag (a seek would start decoding again from a keyframe,
   * and one to just behind the edge leaves no room for the next picture arriving late); a jump only
   * when far behind.
   */
  private keepLive(buffer: SourceBuffer): void {
    if (buffer.buffered.length === 0 || buffer.updating) return;
    const end = buffer.buffered.end(buffer.buffered.length - 1);
    const start = buffer.buffered.start(0);
    const lag = end - this.video.currentTime;
    if (this.video.currentTime < start || lag > MAX_LAG_S) this.video.currentTime = Math.max(start, end - TARGET_LAG_S);
    else {
      const rate = 1 + Math.max(-MAX_RATE_STEP, Math.min(MAX_RATE_STEP, (lag - TARGET_LAG_S) * 0.25));
      if (Math.abs(rate - this.video.playbackRate) > 0.02) this.video.playbackRate = rate;
    }
    if (this.video.paused) void this.video.play().catch(() => undefined);
    if (this.video.currentTime - start > KEEP_S * 1.5) buffer.remove(start, this.video.currentTime - KEEP_S);
  }
}

class Unsupported extends Error {}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
