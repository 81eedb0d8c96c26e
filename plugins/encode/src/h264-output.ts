import type { Logger } from 'lookout/core';
import { GopBuffer } from './gop-buffer.js';
import type { EncodedPicture, H264Video } from './service.js';

/**
 * The H.264 side of the one encoder run: its pictures fanned out to the consumers that asked for
 * them, and its latest GOP kept, exactly as the pipeline does for H.265. Size, rate and state are the
 * pipeline's (both outputs come from the same frames at the same settings).
 */
export class H264Output implements H264Video {
  readonly codec = 'h264' as const;
  private readonly listeners = new Set<(p: EncodedPicture) => void>();
  private readonly gopBuffer: GopBuffer;

  constructor(
    private readonly main: { readonly width: number; readonly height: number; readonly fps: number; readonly gop: number; readonly running: boolean },
    gopMaxBytes: number,
    private readonly log?: Pick<Logger, 'error'>,
  ) {
    this.gopBuffer = new GopBuffer(gopMaxBytes);
  }

  get width(): number {
    return this.main.width;
  }
  get height(): number {
    return this.main.height;
  }
  get fps(): number {
    return this.main.fps;
  }
  get gop(): number {
    return this.main.gop;
  }
  get running(): boolean {
    return this.main.running;
  }

  subscribe(listener: (picture: EncodedPicture) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  latestGop(): EncodedPicture[] {
    return this.gopBuffer.snapshot();
  }

  /** A new encoder run: its first picture is a keyframe with new parameter sets. */
  clear(): void {
    this.gopBuffer.clear();
  }

  emit(picture: EncodedPicture): void {
    this.gopBuffer.add(picture);
    for (const listener of [...this.listeners]) {
      try {
        listener(picture);
      } catch (err) {
        this.log?.error({ err: (err as Error).message }, 'H.264 picture listener failed');
      }
    }
  }
}
