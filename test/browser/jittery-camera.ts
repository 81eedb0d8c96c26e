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
import { H264AccessUnitAssembler } from '../../plugins/encode/src/h264-annexb.js';
import { splitAnnexB } from '../../plugins/rtsp/src/nal-units.js';
import { RtspServer } from '../../plugins/rtsp/src/rtsp-server.js';
import { StreamSource, type PictureStream } from '../../plugins/rtsp/src/stream-source.js';

const run = promisify(execFile);

export interface JitteryCamera {
  port: number;
  close(): Promise<void>;
}

/** ffmpeg's test pattern as H.264 access units: `seconds` of it, a keyframe every `fps` pictures. */
async function clip(fps: number, seconds: number): Promise<{ data: Buffer; keyframe: boolean }[]> {
  const { stdout } = await run(
    'ffmpeg',
    ['-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=${fps}`, '-t', String(seconds)].concat([
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
  const assembler = new H264AccessUnitAssembler((au) => units.push(au));
  for (const nal of splitAnnexB(stdout)) assembler.push(nal);
  assembler.flush();
  return units;
}

export async function startJitteryCamera(fps: number, jitterMs: number): Promise<JitteryCamera> {
  const units = await clip(fps, 4);
  const listeners = new Set<(p: EncodedPicture) => void>();
  let gop: EncodedPicture[] = [];
  let index = 0;
  const started = Date.now();
  // A fixed pattern, so that every run sees the same timestamps: spread over ±jitterMs.
  const jitter = (n: number) => Math.round(jitterMs * Math.sin(n * 2.39996));
  const timer = setInterval(() => {
    const unit = units[index % units.length];
    const picture: EncodedPicture = { ...unit, index, capturedAtMs: started + (index * 1000) / fps + jitter(index), generation: 1 };
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
    async close() {
      clearInterval(timer);
      await server.close();
    },
  };
}
