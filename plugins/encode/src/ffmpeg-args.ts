import type { EncoderSettings, RawInput } from './video-encoder.js';

/**
 * The libx265 command: raw frames on standard input, H.265 Annex B on standard output.
 * - `keyint = min-keyint = gop`, `scenecut=0`: a keyframe exactly every gop pictures, so chunks and
 *   the live tail start where the profile says;
 * - `bframes=0` and `-tune zerolatency` (no lookahead, one frame thread): pictures leave in capture
 *   order right after their frame, which is how capture times are matched to pictures;
 * - `repeat-headers=1`: every keyframe carries VPS/SPS/PPS, so a decoder can start on any of them;
 * - `-flush_packets 1`: each picture is written when it is done, not when a buffer fills.
 * VBR lets the rate swing up to twice the target inside a two-second buffer; CBR caps it at the target.
 */
export function libx265Args(s: EncoderSettings, input: RawInput, h264Fd?: number): string[] {
  const kbps = s.bitrateKbps;
  const maxKbps = s.rateControl === 'CBR' ? kbps : 2 * kbps;
  const bufKbits = s.rateControl === 'CBR' ? kbps : 2 * maxKbps;
  const x265 = [`keyint=${s.gop}`, `min-keyint=${s.gop}`, 'scenecut=0', 'bframes=0', 'repeat-headers=1', 'log-level=error'];
  const scale = input.width === s.width && input.height === s.height ? [] : ['-vf', `scale=${s.width}:${s.height}`];
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-f',
    'rawvideo',
    '-pix_fmt',
    input.pixelFormat,
    '-s',
    `${input.width}x${input.height}`,
    '-r',
    String(s.fps),
    '-i',
    'pipe:0',
    ...scale,
    '-an',
    '-pix_fmt',
    'yuv420p',
    '-c:v',
    'libx265',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-b:v',
    `${kbps}k`,
    '-maxrate',
    `${maxKbps}k`,
    '-bufsize',
    `${bufKbits}k`,
    '-x265-params',
    x265.join(':'),
    '-flush_packets',
    '1',
    '-f',
    'hevc',
    'pipe:1',
    ...(h264Fd === undefined ? [] : libx264OutputArgs(s, input, h264Fd)),
  ];
}

/**
 * The H.264 output of the same run (one decode of the raw input, two encodes of it): the keyframe
 * rule of the H.265 output (keyframes on the same frames, each with SPS/PPS), no B-frames, constrained
 * baseline (what every H.264 decoder plays), written to file descriptor `fd`.
 */
export function libx264OutputArgs(s: EncoderSettings, input: RawInput, fd: number): string[] {
  const kbps = s.bitrateKbps;
  const maxKbps = s.rateControl === 'CBR' ? kbps : 2 * kbps;
  const bufKbits = s.rateControl === 'CBR' ? kbps : 2 * maxKbps;
  const x264 = [`keyint=${s.gop}`, `min-keyint=${s.gop}`, 'scenecut=0', 'bframes=0', 'repeat-headers=1'];
  const scale = input.width === s.width && input.height === s.height ? [] : ['-vf', `scale=${s.width}:${s.height}`];
  return [
    ...scale,
    '-an',
    '-pix_fmt',
    'yuv420p',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    '-profile:v',
    'baseline',
    '-b:v',
    `${kbps}k`,
    '-maxrate',
    `${maxKbps}k`,
    '-bufsize',
    `${bufKbits}k`,
    '-x264-params',
    x264.join(':'),
    '-flush_packets',
    '1',
    '-f',
    'h264',
    `pipe:${fd}`,
  ];
}
