import { AdmissionQueue } from 'lookout/lib/limits';
import { jpegFromHevc } from 'lookout/lib/media';
import type { EncodedVideo } from '../../../encode/src/service.js';

export class SnapshotUnavailable extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * GET /onvif/snapshot.jpg: the newest picture of the live stream, decoded from its latest GOP (no
 * second encode). Bounded: a few decodes at once, a few waiting, the rest told 503; the last JPEG is
 * reused while no newer picture exists (clients poll snapshots).
 */
export class Snapshot {
  private readonly queue: AdmissionQueue;
  private last: { key: string; jpeg: Buffer } | undefined;

  constructor(
    private readonly video: EncodedVideo,
    private readonly o: { concurrency: number; maxWaiting: number; timeoutMs: number },
  ) {
    this.queue = new AdmissionQueue({ concurrency: o.concurrency, maxWaiting: o.maxWaiting });
  }

  async take(signal: AbortSignal): Promise<Buffer> {
    const bounded = AbortSignal.any([signal, AbortSignal.timeout(this.o.timeoutMs)]);
    const admitted = this.queue.admit(bounded);
    if (!admitted) throw new SnapshotUnavailable('snapshots are busy; retry', 503);
    const release = await admitted;
    try {
      const gop = this.video.latestGop();
      if (gop.length === 0) throw new SnapshotUnavailable(this.video.running ? 'the encoder has produced no keyframe yet' : 'the encoder is not running', 503);
      const newest = gop[gop.length - 1];
      const key = `${newest.generation}/${newest.index}`;
      if (this.last?.key === key) return this.last.jpeg;
      const jpeg = await jpegFromHevc(Buffer.concat(gop.map((p) => p.data)), {
        width: this.video.width,
        quality: 85,
        timeoutMs: this.o.timeoutMs,
        signal: bounded,
      });
      this.last = { key, jpeg };
      return jpeg;
    } finally {
      release();
    }
  }
}
