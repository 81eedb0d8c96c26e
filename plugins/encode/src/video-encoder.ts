/**
 * The encoder a device's video goes through. The software implementation here runs ffmpeg with
 * libx265; a device with a hardware encoder implements the same interface, and everything above it
 * (pacing, parsing, fan-out, the live stream, restarts) stays as it is.
 */

/** What the camera profile (or its ENCODE_* overrides) asks of the encoder. */
export interface EncoderSettings {
  width: number;
  height: number;
  fps: number;
  /** Keyframe interval in pictures; every keyframe carries the parameter sets (VPS/SPS/PPS). */
  gop: number;
  bitrateKbps: number;
  rateControl: 'CBR' | 'VBR';
}

/** The raw frames fed in: packed BGR888 of the frame source's size (the encoder scales). */
export interface RawInput {
  width: number;
  height: number;
  pixelFormat: 'bgr24';
}

export interface EncoderExitInfo {
  /** Exit status, or null when a signal ended it. */
  code: number | null;
  signal: string | null;
  /** What the encoder said last (ffmpeg's last standard error line), or why it could not run. */
  message: string;
}

export interface EncoderHandlers {
  /** H.265 Annex B bytes in pieces of any size, in stream order. */
  onData(bytes: Buffer): void;
  /**
   * Given when the pipeline wants the H.264 output too (encoders with `h264Output`): H.264 Annex B
   * bytes of the same run, one picture per frame fed, in pieces of any size.
   */
  onH264Data?(bytes: Buffer): void;
  /** The encoder ended without stop() being asked. */
  onExit(exit: EncoderExitInfo): void;
}

export interface VideoEncoder {
  /** For logs and status, e.g. `ffmpeg-libx265`. */
  readonly name: string;
  /** The process doing the work, when there is one (a hardware encoder has none). */
  readonly pid: number | null;
  readonly running: boolean;
  /** True when the encoder can also emit H.264 from the same run (a second output, not a second encode of a second capture). */
  readonly h264Output?: boolean;
  start(settings: EncoderSettings, input: RawInput, handlers: EncoderHandlers): void;
  /**
   * Offers one frame. False when the encoder is backed up and the frame was dropped: a slow encoder
   * never makes frames pile up in memory.
   */
  feed(frame: Uint8Array): boolean;
  /** Ends the input, lets the pictures still inside come out, then ends the encoder (killed past a grace period). */
  stop(): Promise<void>;
}

export function sameSettings(a: EncoderSettings, b: EncoderSettings): boolean {
  return (
    a.width === b.width && a.height === b.height && a.fps === b.fps && a.gop === b.gop && a.bitrateKbps === b.bitrateKbps && a.rateControl === b.rateControl
  );
}
