import { serviceToken, type AccessUnit } from 'lookout/core';

/** An encoded picture as it leaves the encoder. */
export interface EncodedPicture extends AccessUnit {
  /** Sequence number since the encoder started. */
  index: number;
  /** Capture time of the frame (epoch ms). */
  capturedAtMs: number;
}

export interface EncoderStats {
  frames: number;
  dropped: number;
  /** Measured over the last seconds of output. */
  bitrate_kbps: number;
  encode_fps: number;
}

export interface EncoderExit {
  at: string;
  message: string;
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
}

export const EncodedVideoToken = serviceToken<EncodedVideo>('encode.video');
