/**
 * The recorder in a runtime of real plugins on an in-process bus: the recorder, an H.265 encoder
 * (ffmpeg libx265, or the encode plugin once it is given) and optionally the camera and detector.
 * Plus ffprobe helpers the recorder's tests check chunks with.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryBus } from '../../../../core/src/bus/memory-bus.js';
import { importPlugin } from '../../../../core/src/images/load-image.js';
import { createLogger } from '../../../../core/src/log/logger.js';
import { loadPlugins, type LoadedRuntime } from '../../../../core/src/plugin/loader.js';
import type { Plugin } from '../../../../core/src/index.js';
import type { LayerId } from '../../../../core/src/plugin/manifest.js';
import { packageRoot } from '../../../../core/src/paths/package-root.js';
import recorder from '../../../../plugins/recorder/src/index.js';
import { ffmpegTestEncoder, type TestEncoderControl, type TestEncoderOptions } from './ffmpeg-test-encoder.js';

export interface RecorderRig {
  id: string;
  dataDir: string;
  recordings: string;
  bus: MemoryBus;
  runtime: LoadedRuntime;
  /** The test-pattern encoder's control (undefined with the real encode plugin). */
  encoder: TestEncoderControl;
  call(tool: string, args?: Record<string, unknown>): Promise<any>;
  /** data_manifest messages published so far. */
  manifests(): any[];
  stop(): Promise<void>;
}

export async function startRecorder(
  options: {
    dataDir?: string;
    env?: Record<string, string>;
    encoder?: TestEncoderOptions;
    /** The encode plugin on the sim camera (320x240, 5 fps, a keyframe every 5) instead of ffmpeg's test pattern. */
    realEncoder?: boolean;
    /** First-party plugins to load beside it (camera, detector…), by name. */
    with?: string[];
    layer?: LayerId;
    logLevel?: 'silent' | 'info' | 'debug';
  } = {},
): Promise<RecorderRig> {
  const id = `cam-rec-${randomBytes(3).toString('hex')}`;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'lookout-rec-')));
  const recordings = join(dataDir, 'data', 'recordings');
  const encoder = ffmpegTestEncoder(options.encoder);
  const names = options.realEncoder ? ['camera', 'encode', ...(options.with ?? []).filter((n) => n !== 'camera')] : (options.with ?? []);
  const others: Plugin[] = await Promise.all(names.map((name) => importPlugin(name, packageRoot())));
  const encodeEnv = options.realEncoder ? { ENCODE_RESOLUTION: '320x240', ENCODE_FPS: '5', ENCODE_GOP: '5', LIVE_PORT: '0' } : {};
  const bus = new MemoryBus();
  const runtime = await loadPlugins({
    plugins: [...(options.realEncoder ? [] : [encoder.plugin]), ...others, recorder],
    runtime: { kind: 'device', id, dataDir, layer: options.layer ?? 'layer0', role: 'front_door', device: { source: 'sim' } },
    bus,
    env: { CHUNK_SECONDS: '1', STATUS_INTERVAL_MS: '300', STORAGE_CHECK_MS: '500', RECORDING_STALL_MS: '1500', ...encodeEnv, ...options.env },
    logger: createLogger({ level: options.logLevel ?? 'silent' }),
    startTimeoutMs: 60_000,
  });
  return {
    id,
    dataDir,
    recordings,
    bus,
    runtime,
    encoder: encoder.control,
    call: (tool, args = {}) => runtime.tools.call(tool, args) as Promise<any>,
    manifests: () => bus.published.filter((m) => m.topic === `devices/${id}/data_manifest`).map((m) => JSON.parse(m.payload.toString())),
    async stop() {
      await runtime.stop();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** What ffprobe reads of a raw H.265 chunk at a frame rate: decoded pictures and key frames. */
export function ffprobeChunk(path: string, fps: number): { frames: number; keyframes: number; duration_s: number } {
  const out = execFileSync(
    'ffprobe',
    ['-v', 'error', '-f', 'hevc', '-framerate', String(fps), '-count_frames', '-show_entries', 'stream=nb_read_frames:frame=key_frame', '-of', 'json', path],
    { maxBuffer: 64 * 1024 * 1024 },
  ).toString();
  const json = JSON.parse(out) as { streams: { nb_read_frames: string }[]; frames: { key_frame: number }[] };
  const frames = Number(json.streams[0].nb_read_frames);
  return { frames, keyframes: json.frames.filter((f) => f.key_frame === 1).length, duration_s: frames / fps };
}

/** Decodes the whole chunk; throws with ffmpeg's message when it does not play. */
export function decodeChunk(path: string, fps: number): void {
  execFileSync('ffmpeg', ['-v', 'error', '-xerror', '-f', 'hevc', '-framerate', String(fps), '-i', path, '-f', 'null', '-'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** Remuxes into mp4 at the chunk's rate and returns the container's duration as ffprobe reads it. */
export function mp4Duration(path: string, fps: number, out: string): number {
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'hevc', '-framerate', String(fps), '-i', path, '-c', 'copy', '-tag:v', 'hvc1', out]);
  return Number(execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', out]).toString().trim());
}

export function waitUntil<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async () => {
      try {
        const v = await check();
        if (v) return resolve(v);
      } catch {
        // not yet
      }
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      setTimeout(() => void tick(), 50);
    };
    void tick();
  });
}
