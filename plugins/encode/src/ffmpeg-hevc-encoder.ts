import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { libx265Args } from './ffmpeg-args.js';
import type { EncoderHandlers, EncoderSettings, RawInput, VideoEncoder } from './video-encoder.js';

/** ffmpeg's last words are at the end of standard error; only that much is kept. */
const STDERR_TAIL = 4096;
/** The child's file descriptor of the H.264 output. */
const H264_FD = 3;
/** How long a stopping ffmpeg may take to write out its last pictures before it is killed. */
const STOP_GRACE_MS = 3000;

/**
 * The software encoder: one ffmpeg (libx265) child per start. Frames go to its standard input only
 * while fewer than `maxQueuedFrames` are still waiting there, so a stalled or slow ffmpeg costs
 * dropped frames, never memory.
 */
export class FfmpegHevcEncoder implements VideoEncoder {
  readonly name = 'ffmpeg-libx265';
  /** libx264 beside libx265 in the same ffmpeg, written to a fourth pipe (file descriptor 3). */
  readonly h264Output = true;
  private child: ChildProcess | undefined;
  private frameBytes = 0;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: { program?: string; maxQueuedFrames?: number } = {}) {}

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  start(settings: EncoderSettings, input: RawInput, handlers: EncoderHandlers): void {
    if (this.child) throw new Error('the encoder is already running');
    this.frameBytes = input.width * input.height * 3;
    const h264 = handlers.onH264Data !== undefined;
    const args = libx265Args(settings, input, h264 ? H264_FD : undefined);
    const child = spawn(this.options.program ?? 'ffmpeg', args, { stdio: h264 ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.stopping = undefined;
    let stderr = '';
    let spawnError: string | undefined;
    child.stdout.on('data', (d: Buffer) => handlers.onData(d));
    if (h264) (child.stdio[H264_FD] as Readable).on('data', (d: Buffer) => handlers.onH264Data!(d));
    child.stderr.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString('utf8')).slice(-STDERR_TAIL);
    });
    // A write after ffmpeg died fails with EPIPE; its exit says what happened.
    child.stdin.on('error', () => undefined);
    child.on('error', (err) => {
      spawnError = `${this.options.program ?? 'ffmpeg'} could not run: ${err.message}`;
    });
    child.on('close', (code, signal) => {
      if (this.child === child) this.child = undefined;
      if (this.stopping) return;
      const last = lastLine(stderr);
      const how = signal ? `killed by ${signal}` : `exited with ${code}`;
      handlers.onExit({ code, signal, message: spawnError ?? `ffmpeg ${how}: ${last}` });
    });
  }

  feed(frame: Uint8Array): boolean {
    const stdin = this.child?.stdin;
    if (!stdin || this.stopping || !stdin.writable) return false;
    if (stdin.writableLength >= (this.options.maxQueuedFrames ?? 2) * this.frameBytes) return false;
    stdin.write(frame);
    return true;
  }

  /** Frames written but not yet taken by ffmpeg (for tests and the bench). */
  queuedBytes(): number {
    return this.child?.stdin?.writableLength ?? 0;
  }

  stop(): Promise<void> {
    const child = this.child;
    if (!child) return Promise.resolve();
    this.stopping ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      child.stdin!.end();
    });
    return this.stopping;
  }
}

function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return (lines[lines.length - 1] ?? 'no message').slice(0, 300);
}
