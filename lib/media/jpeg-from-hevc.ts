import { accessUnitsOf } from './hevc-annexb.js';
import { runFfmpeg } from './ffmpeg-process.js';
import { LookoutError } from 'lookout/core';

export interface JpegOptions {
  /** Output width in pixels; the height follows the aspect ratio (even). */
  width: number;
  /** JPEG quality 1-100 (mapped onto ffmpeg's mjpeg scale 2-31). */
  quality: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** mjpeg's qscale runs from 2 (best) to 31 (worst). */
export function mjpegQscale(quality: number): number {
  const q = Math.min(100, Math.max(1, Math.round(quality)));
  return Math.round(31 - ((q - 1) / 99) * 29);
}

/**
 * The last picture of an H.265 Annex B stream that starts on a keyframe (a live tail, or a chunk),
 * as a JPEG. Every picture from the keyframe on is decoded; only the last is encoded.
 */
export async function jpegFromHevc(stream: Uint8Array, options: JpegOptions): Promise<Buffer> {
  const pictures = accessUnitsOf(stream).length;
  if (pictures === 0) throw new LookoutError('recording_unreadable', 'the H.265 stream holds no complete picture');
  const jpeg = await runFfmpeg(
    [
      '-f',
      'hevc',
      '-i',
      'pipe:0',
      '-vf',
      `select=gte(n\\,${pictures - 1}),scale=${options.width}:-2`,
      '-frames:v',
      '1',
      '-q:v',
      String(mjpegQscale(options.quality)),
      '-f',
      'mjpeg',
      'pipe:1',
    ],
    { input: stream, timeoutMs: options.timeoutMs, ...(options.signal ? { signal: options.signal } : {}), maxOutputBytes: 8 * 1024 * 1024 },
    'recording_unreadable',
  );
  if (jpeg.length < 4 || jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new LookoutError('recording_unreadable', 'the H.265 stream decoded to no picture');
  return jpeg;
}
