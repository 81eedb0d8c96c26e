/** 90 kHz, the RTP clock of video and the fragments' timescale. */
export const TICKS_PER_SECOND = 90_000;
/** Before any rate is known or measured: 10 fps. */
const DEFAULT_TICKS = 9000;
/** An RTP step past this (or backwards) is a new clock base, not time that passed. */
const MAX_STEP_TICKS = TICKS_PER_SECOND * 10;
/** How far (in pictures) the stream's clock may stray from the nominal one before the timeline follows it. */
const TOLERANCE_FRAMES = 1.5;
/** Gaps kept for the measured rate of a stream that announces none. */
const MEASURED_GAPS = 15;

export interface SampleTime {
  /** Decode (and presentation: no B-frames) time in 90 kHz ticks from the first picture. */
  decodeTime: number;
  duration: number;
}

/**
 * Decode times and durations of a live stream's pictures on a steady clock. Media Source
 * Extensions take a decode-time gap over twice the previous sample's duration as a discontinuity
 * and drop pictures up to the next keyframe (Chromium), so the camera's RTP times, which carry the
 * capture's jitter, are not used as they come: every picture lasts the nominal frame time (the
 * SDP's a=framerate, else the median of the measured gaps) and starts where the previous one ended,
 * so the timeline has no gap at all. It still keeps to the camera's clock: when the two part by
 * more than 1.5 pictures (the source dropped pictures, or its rate is not quite the nominal one),
 * the picture at hand is lengthened (or shortened, down to half a frame) by the difference, which
 * re-anchors the next picture on the camera's time without a jump.
 */
export class SampleClock {
  private nominal: number | undefined;
  private readonly gaps: number[] = [];
  private lastRtp: number | undefined;
  /** The camera's time of the latest picture, unwrapped, on the same origin as `next`. */
  private source = 0;
  /** Where the next picture starts on the timeline. */
  private next = 0;

  /** The announced rate (pictures per second); ignored unless positive and finite. */
  setRate(fps: number): void {
    if (Number.isFinite(fps) && fps > 0) this.nominal = Math.max(1, Math.round(TICKS_PER_SECOND / fps));
  }

  /** Ticks per picture: the announced rate, else the median measured gap. */
  get frameTicks(): number {
    if (this.nominal !== undefined) return this.nominal;
    if (this.gaps.length === 0) return DEFAULT_TICKS;
    const sorted = [...this.gaps].sort((a, b) => a - b);
    return sorted[sorted.length >> 1];
  }

  /** The timeline's place for the picture the camera stamped `rtpTime` (32-bit, wrapping). */
  place(rtpTime: number): SampleTime {
    if (this.lastRtp !== undefined) {
      const step = (rtpTime - this.lastRtp) >>> 0;
      if (step > 0 && step <= MAX_STEP_TICKS) {
        this.source += step;
        this.gaps.push(step);
        if (this.gaps.length > MEASURED_GAPS) this.gaps.shift();
      } else this.source = this.next; // a new clock base (or a repeated time): take the timeline's place as the camera's.
    }
    this.lastRtp = rtpTime;
    const frame = this.frameTicks;
    const drift = this.source - this.next;
    const duration = Math.abs(drift) > frame * TOLERANCE_FRAMES ? Math.max(Math.ceil(frame / 2), frame + drift) : frame;
    const decodeTime = this.next;
    this.next += duration;
    return { decodeTime, duration };
  }
}
