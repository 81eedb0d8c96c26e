/**
 * A real H.265 encoder for the recorder's tests until (and beside) the encode plugin: ffmpeg with
 * libx265 encoding its own test pattern in real time, parsed into pictures with core's Annex B
 * splitter, behind the EncodedVideo service the encode plugin provides. Not a mock: the bytes are
 * what a device encoder writes, keyframes included; only the camera is ffmpeg's testsrc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { AccessUnitAssembler, AnnexBSplitter } from '../../../../lib/media/index.js';
import { definePlugin, type Plugin } from '../../../../core/src/index.js';
import { EncodedVideoToken, type EncodedPicture, type EncoderExit, type EncodedVideo } from '../../../../plugins/encode/src/service.js';

export interface TestEncoderOptions {
  width?: number;
  height?: number;
  fps?: number;
  gop?: number;
}

export interface TestEncoderControl {
  /** The running ffmpeg, to kill it (an encoder that exits under the recorder). */
  child(): ChildProcess | undefined;
  pictures(): number;
}

export function ffmpegTestEncoder(options: TestEncoderOptions = {}): { plugin: Plugin; control: TestEncoderControl } {
  const width = options.width ?? 320;
  const height = options.height ?? 240;
  const fps = options.fps ?? 5;
  const gop = options.gop ?? 5;
  let child: ChildProcess | undefined;
  let count = 0;
  const plugin = definePlugin({
    name: 'test-encoder',
    version: '1.0.0',
    core: '^1',
    description: 'ffmpeg libx265 on its test pattern (tests)',
    layer: 'layer0',
    provides: [EncodedVideoToken],
    async start(ctx) {
      const listeners = new Set<(p: EncodedPicture) => void>();
      const exitListeners = new Set<(e: EncoderExit) => void>();
      let gopPictures: EncodedPicture[] = [];
      let lastExit: EncoderExit | null = null;
      let running = true;
      let stopping = false;
      const startedAt = Date.now();
      const args = [
        ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-re', '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=${fps}`],
        ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', `keyint=${gop}:min-keyint=${gop}:scenecut=0:bframes=0:repeat-headers=1:log-level=error`],
        ...['-f', 'hevc', 'pipe:1'],
      ];
      child = spawn('ffmpeg', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
      const assembler = new AccessUnitAssembler((au) => {
        const picture: EncodedPicture = { ...au, index: count++, capturedAtMs: Date.now(), generation: 1 };
        if (picture.keyframe) gopPictures = [];
        gopPictures.push(picture);
        for (const l of listeners) l(picture);
      });
      const splitter = new AnnexBSplitter((nal) => assembler.push(nal));
      child.stdout!.on('data', (d: Buffer) => splitter.push(d));
      child.on('exit', (code, signal) => {
        running = false;
        if (stopping) return;
        lastExit = { at: new Date().toISOString(), message: `ffmpeg exited with ${signal ?? code}${stderr ? `: ${stderr.trim()}` : ''}` };
        for (const l of exitListeners) l(lastExit);
      });
      const video: EncodedVideo = {
        codec: 'hevc',
        width,
        height,
        fps,
        gop,
        get running() {
          return running;
        },
        subscribe(l) {
          listeners.add(l);
          return () => listeners.delete(l);
        },
        latestGop: () => [...gopPictures],
        stats: () => ({ frames: count, dropped: 0, bitrate_kbps: 0, encode_fps: Math.round((count / Math.max(1, (Date.now() - startedAt) / 1000)) * 10) / 10 }),
        lastExit: () => lastExit,
        onExit(l) {
          exitListeners.add(l);
          return () => exitListeners.delete(l);
        },
        encoder: () => ({ name: 'ffmpeg-testsrc', pid: child?.pid ?? null, generation: 1, restarts: 0 }),
      };
      ctx.services.provide(EncodedVideoToken, video);
      ctx.onStop(() => {
        stopping = true;
        child?.kill('SIGKILL');
      });
    },
  });
  return { plugin, control: { child: () => child, pictures: () => count } };
}
