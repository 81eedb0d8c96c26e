/**
 * When each picture of the live stream was captured, read from the stream itself: the hub puts a
 * ProducerReferenceTimeBox (prft, ISO/IEC 14496-12 8.16.5) before every fragment, the picture's
 * capture time (NTP) beside its media time, from the camera's RTCP sender reports. The player hands
 * every chunk it appends here (boxes may be cut anywhere between chunks); the live view asks which
 * capture time the picture on screen has, to draw the detections of that instant.
 */

/** Seconds from NTP's epoch (1900) to Unix's (1970). */
const NTP_UNIX_OFFSET_S = 2_208_988_800;
/** The boxes read whole (the rest is skipped): prft, and moov for the track's timescale. */
const READ = new Set(['prft', 'moov']);
/** A moov larger than this is not one the hub makes: its timescale is not looked for. */
const MAX_READ_BYTES = 1 << 20;
/** Marks kept: a minute of pictures at 30 fps, far more than the SourceBuffer keeps. */
const MAX_MARKS = 1800;

export interface CaptureMark {
  /** The picture's media time (seconds, the video's currentTime scale). */
  mediaTime: number;
  /** Its capture time, Unix ms. */
  capturedAtMs: number;
}

export interface ShownPicture {
  capturedAtMs: number;
  /** Ms to the next picture's capture (or from the previous one, for the newest): the frame interval there. */
  intervalMs: number | undefined;
}

export class CaptureClock {
  private readonly marks: CaptureMark[] = [];
  private timescale = 90_000;
  private head: number[] = [];
  private skip = 0;
  private body: Uint8Array | undefined;
  private bodyType = '';
  private filled = 0;
  /** A box too short to be one: the rest of the stream is not read (the video plays on). */
  private broken = false;

  /** Reads the boxes of the next chunk of the stream. */
  push(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length && !this.broken;) {
      if (this.body) {
        const n = Math.min(this.body.length - this.filled, bytes.length - i);
        this.body.set(bytes.subarray(i, i + n), this.filled);
        this.filled += n;
        i += n;
        if (this.filled === this.body.length) {
          this.onBox(this.bodyType, this.body);
          this.body = undefined;
        }
        continue;
      }
      if (this.skip > 0) {
        const n = Math.min(this.skip, bytes.length - i);
        this.skip -= n;
        i += n;
        continue;
      }
      this.head.push(bytes[i++]);
      if (this.head.length < 8) continue;
      const size = u32(this.head, 0);
      const type = String.fromCharCode(...this.head.slice(4, 8));
      if (size === 1) {
        // A 64-bit size follows.
        if (this.head.length < 16) continue;
        this.open(type, u32(this.head, 8) * 2 ** 32 + u32(this.head, 12) - 16);
      } else if (size < 8) this.broken = true;
      else this.open(type, size - 8);
      this.head = [];
    }
  }

  /** The marks read so far, oldest first (a copy). */
  get all(): CaptureMark[] {
    return [...this.marks];
  }

  /**
   * The capture time of the picture shown at media time `t`: the latest one starting at or before
   * it (a millisecond of slack for the float seconds), undefined when the stream carries none there.
   */
  shownAt(t: number): ShownPicture | undefined {
    let lo = 0;
    let hi = this.marks.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.marks[mid].mediaTime <= t + 0.001) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found < 0) return undefined;
    const mark = this.marks[found];
    const next = this.marks[found + 1];
    const previous = this.marks[found - 1];
    const intervalMs = next ? next.capturedAtMs - mark.capturedAtMs : previous ? mark.capturedAtMs - previous.capturedAtMs : undefined;
    return { capturedAtMs: mark.capturedAtMs, intervalMs };
  }

  private open(type: string, payload: number): void {
    if (READ.has(type) && payload <= MAX_READ_BYTES) {
      this.body = new Uint8Array(payload);
      this.bodyType = type;
      this.filled = 0;
      if (payload === 0) {
        this.onBox(type, this.body);
        this.body = undefined;
      }
    } else this.skip = payload;
  }

  private onBox(type: string, body: Uint8Array): void {
    if (type === 'moov') {
      // mdhd: size, type, version, flags, then (v0) 32-bit creation and modification times and the
      // timescale; (v1) the two times in 64 bits.
      const at = find(body, 'mdhd');
      const version = at >= 0 ? body[at + 8] : 0;
      const scaleAt = at + (version === 1 ? 28 : 20);
      if (at >= 0 && scaleAt + 4 <= body.length) {
        const scale = u32(body, scaleAt);
        if (scale > 0) this.timescale = scale;
      }
      return;
    }
    // prft: version, flags, reference_track_ID, ntp_timestamp (64), media_time (32 or 64).
    const version = body[0];
    if (body.length < (version === 1 ? 24 : 20)) return;
    const ntpSeconds = u32(body, 8);
    const ntpFraction = u32(body, 12);
    const media = version === 1 ? u32(body, 16) * 2 ** 32 + u32(body, 20) : u32(body, 16);
    const mark = { mediaTime: media / this.timescale, capturedAtMs: (ntpSeconds - NTP_UNIX_OFFSET_S) * 1000 + (ntpFraction / 2 ** 32) * 1000 };
    // A new stream (a reconnect) starts its times over: marks of the old one would mislead.
    if (this.marks.length > 0 && mark.mediaTime <= this.marks[this.marks.length - 1].mediaTime) this.marks.length = 0;
    this.marks.push(mark);
    if (this.marks.length > MAX_MARKS) this.marks.splice(0, this.marks.length - MAX_MARKS);
  }
}

function u32(b: ArrayLike<number>, at: number): number {
  return ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;
}

/** Where the box `type` starts (its size field) inside `b`, or -1: a plain scan, moov is small. */
function find(b: Uint8Array, type: string): number {
  const c = [...type].map((ch) => ch.charCodeAt(0));
  for (let i = 4; i + 4 <= b.length; i++) if (b[i] === c[0] && b[i + 1] === c[1] && b[i + 2] === c[2] && b[i + 3] === c[3]) return i - 4;
  return -1;
}
