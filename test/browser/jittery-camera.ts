/**
 * A camera whose capture clock jitters, for the live-view tests: the project's real RTSP server on
 * 127.0.0.1 (no credentials), streaming /preview_h264 from an H.264 clip ffmpeg makes (320x240,
 * Constrained Baseline, a keyframe a second), one picture every 1/fps s of wall time, each stamped
 * with its capture time ± a fixed pattern of up to `jitterMs` (what a loaded camera's frame pacing
 * does to its RTP times). Not a test file itself.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { EncodedPicture } from '../../plugins/encode/src/service.js';
import { AccessUnitAssembler, nalUnitsOf } from '../../lib/media/index.js';
import { RtspServer } from '../../plugins/rtsp/src/rtsp-server.js';
import { StreamSource, type PictureStream } from '../../plugins/rtsp/src/stream-source.js';

const run = promisify(execFile);

export interface JitteryCamera {
  port: number;
  /** The capture time (Unix ms, as stamped) of every picture made so far, by index. */
  readonly captured: readonly number[];
  /** The capture time (Unix ms) picture `index` has or will have. */
  captureTimeOf(index: number): number;
  /** The picture made so far (its index), -1 before the first. */
  readonly index: number;
  close(): Promise<void>;
}

export interface JitteryCameraOptions {
  /**
   * Pictures of one flat grey each, picture n of the 4 s loop at luma 16 + 5·(n mod 40) (limited
   * range: every one a distinct grey on screen), so that a reader of the screen tells which picture
   * is shown; instead of ffmpeg's test pattern.
   */
  numbered?: boolean;
}

/** Which picture of a numbered camera's loop (index mod fps·4) a grey on screen (0–255, full range) is. */
export function pictureOfGrey(grey: number): number {
  return Math.round((grey * 219) / 255 / 5);
}

/** Seconds of pictures the camera loops over. */
const LOOP_S = 4;

/** ffmpeg's test pattern as H.264 access units: `seconds` of it, a keyframe every `fps` pictures. */
async function clip(fps: number, seconds: number, numbered: boolean): Promise<{ data: Buffer; keyframe: boolean }[]> {
  const source = numbered ? `nullsrc=size=320x240:rate=${fps},geq=lum='16+5*mod(N,${fps * seconds})':cb=128:cr=128` : `testsrc=size=320x240:rate=${fps}`;
  const { stdout } = await run(
    'ffmpeg',
    ['-v', 'error', '-f', 'lavfi', '-i', source, '-t', String(seconds)].concat([
      '-c:v',
      'libx264',
      '-profile:v',
      'baseline',
      '-g',
      String(fps),
      '-bf',
      '0',
      '-pix_fmt',
      'yuv420p',
      '-f',
      'h264',
      '-',
    ]),
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  const units: { data: Buffer; keyframe: boolean }[] = [];
  const assembler = new AccessUnitAssembler((au) => units.push(au), 'h264');
  for (const nal of nalUnitsOf(stdout)) assembler.push(nal);
  assembler.flush();
  return units;
}

export async function startJitteryCamera(fps: number, jitterMs: number, options: JitteryCameraOptions = {}): Promise<JitteryCamera> {
  const units = await clip(fps, LOOP_S, options.numbered === true);
  const captured: number[] = [];
  const listeners = new Set<(p: EncodedPicture) => void>();
  let gop: EncodedPicture[] = [];
  let index = 0;
  const started = Date.now();
  // A fixed pattern, so that every run sees the same timestamps: spread over ±jitterMs.
  const jitter = (n: number) => Math.round(jitterMs * Math.sin(n * 2.39996));
  const captureTimeOf = (n: number) => started + (n * 1000) / fps + jitter(n);
  const timer = setInterval(() => {
    const unit = units[index % units.length];
    const picture: EncodedPicture = { ...unit, index, capturedAtMs: captureTimeOf(index), generation: 1 };
    captured.push(picture.capturedAtMs);
    index++;
    gop = unit.keyframe ? [picture] : [...gop, picture];
    for (const l of listeners) l(picture);
  }, 1000 / fps);
  const stream: PictureStream = {
    fps,
    running: true,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    latestGop: () => gop,
  };
  const server = new RtspServer({
    host: '127.0.0.1',
    port: 0,
    sources: [new StreamSource('/preview_h264', 'h264', stream, 1400)],
    auth: undefined,
    maxSessions: 4,
    maxBufferBytes: 4 << 20,
    sessionTimeoutMs: 60_000,
    firstKeyframeWaitMs: 5000,
    maxConnectionsPerAddress: 8,
    preSessionTimeoutMs: 10_000,
  });
  const port = await server.listen();
  return {
    port,
    captured,
    captureTimeOf,
    get index() {
      return index - 1;
    },
    async close() {
      clearInterval(timer);
      await server.close();
    },
  };
}
