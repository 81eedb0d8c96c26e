import { serviceToken } from 'lookout/core';
import type { AccessUnit } from 'lookout/lib/media';

/** An encoded picture as it leaves the encoder. */
export interface EncodedPicture extends AccessUnit {
  /** Sequence number since the plugin started (it keeps rising across encoder restarts). */
  index: number;
  /** Capture time of the frame (epoch ms). */
  capturedAtMs: number;
  /**
   * Which encoder run made it (1, 2, … since the plugin started): a new run (after a restart or a
   * profile change) begins on a keyframe with new parameter sets, possibly another size.
   */
  generation: number;
}

export interface EncoderStats {
  frames: number;
  dropped: number;
  /** Measured over the last seconds of output. */
  bitrate_kbps: number;
  encode_fps: number;
}

/** The encoder behind the stream, for status and for tests (a hardware encoder has no pid). */
export interface EncoderInfo {
  name: string;
  pid: number | null;
  /** Runs started since the plugin started (the first one included). */
  generation: number;
  /** Restarts after an unexpected exit. */
  restarts: number;
}

export interface EncoderExit {
  at: string;
  message: string;
}

/**
 * The H.264 output of the same encoder run (a second output of the one encoder process, never a second
 * capture): for viewers that decode no H.265 (Home Assistant's ONVIF setup, browsers). Its pictures
 * are Annex B H.264 with 4-byte start codes, one per frame, each keyframe with its SPS/PPS; their
 * index, capturedAtMs and generation match the H.265 picture of the same frame.
 */
export interface H264Video {
  readonly codec: 'h264';
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  readonly gop: number;
  readonly running: boolean;
  subscribe(listener: (picture: EncodedPicture) => void): () => void;
  latestGop(): EncodedPicture[];
}

/**
 * The device's one encoded stream (H.265 Annex B): the recorder, the live stream, snapshots and the
 * RTSP preview all consume it, so a second consumer never means a second encode.
 */
export interface EncodedVideo {
  readonly codec: 'hevc';
  readonly width: number;
  readonly height: number;
  readonly fps: number;
  /** Keyframe interval in pictures. */
  readonly gop: number;
  readonly running: boolean;
  /** Pictures from now on; returns the unsubscribe. */
  subscribe(listener: (picture: EncodedPicture) => void): () => void;
  /** The pictures since the latest keyframe (empty before the first): a decoder can start on it. */
  latestGop(): EncodedPicture[];
  stats(): EncoderStats;
  /** When and why the encoder last stopped unexpectedly (null while it never did). */
  lastExit(): EncoderExit | null;
  onExit(listener: (exit: EncoderExit) => void): () => void;
  encoder(): EncoderInfo;
  /**
   * The H.264 output of the same encoder, turned on by asking (from the next encoder run; the first
   * call restarts a run that lacks it, so a consumer asks once at its start). Null where the encoder
   * makes no H.264 (ENCODE_H264=off, or an encoder without a second output). Optional: a producer of
   * EncodedVideo without it offers H.265 only.
   */
  h264?(): H264Video | null;
}

export const EncodedVideoToken = serviceToken<EncodedVideo>('encode.video');
