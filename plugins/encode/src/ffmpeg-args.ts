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
    ...outputArgs(s, input, { codec: 'libx265', paramsKey: '-x265-params', params: ['log-level=error'], format: 'hevc', pipe: 1 }),
    ...(h264Fd === undefined ? [] : libx264OutputArgs(s, input, h264Fd)),
  ];
}

/**
 * The H.264 output of the same run (one decode of the raw input, two encodes of it): the keyframe
 * rule of the H.265 output (keyframes on the same frames, each with SPS/PPS), no B-frames, constrained
 * baseline (what every H.264 decoder plays), written to file descriptor `fd`.
 */
export function libx264OutputArgs(s: EncoderSettings, input: RawInput, fd: number): string[] {
  return outputArgs(s, input, { codec: 'libx264', profile: 'baseline', paramsKey: '-x264-params', params: [], format: 'h264', pipe: fd });
}

interface OutputCodec {
  codec: 'libx265' | 'libx264';
  profile?: string;
  paramsKey: '-x265-params' | '-x264-params';
  /** Codec parameters beyond the keyframe rule both outputs share. */
  params: string[];
  format: 'hevc' | 'h264';
  pipe: number;
}

/** One encoded output: the profile's size, rate control and keyframe rule, in the codec's own words. */
function outputArgs(s: EncoderSettings, input: RawInput, o: OutputCodec): string[] {
  const kbps = s.bitrateKbps;
  const maxKbps = s.rateControl === 'CBR' ? kbps : 2 * kbps;
  const bufKbits = s.rateControl === 'CBR' ? kbps : 2 * maxKbps;
  const keyframes = [`keyint=${s.gop}`, `min-keyint=${s.gop}`, 'scenecut=0', 'bframes=0', 'repeat-headers=1'];
  const scale = input.width === s.width && input.height === s.height ? [] : ['-vf', `scale=${s.width}:${s.height}`];
  return [
    ...scale,
    '-an',
    '-pix_fmt',
    'yuv420p',
    '-c:v',
    o.codec,
    '-preset',
    'ultrafast',
    '-tune',
    'zerolatency',
    ...(o.profile ? ['-profile:v', o.profile] : []),
    '-b:v',
    `${kbps}k`,
    '-maxrate',
    `${maxKbps}k`,
    '-bufsize',
    `${bufKbits}k`,
    o.paramsKey,
    [...keyframes, ...o.params].join(':'),
    '-flush_packets',
    '1',
    '-f',
    o.format,
    `pipe:${o.pipe}`,
  ];
}
