import type { ChunkSidecar } from 'lookout/core/contracts';
import type { Logger } from 'lookout/core';
import type { SerialQueue } from 'lookout/lib/limits';
import type { DetectionPipeline } from '../../detector/src/service.js';
import type { EncodedVideo } from '../../encode/src/service.js';
import type { ChunkIndex } from './chunk-index.js';
import type { ChunkWriter, CompletedChunk } from './chunk-writer.js';
import { detsLine } from './detection-log.js';
import { writeManifest } from './manifest-file.js';
import type { RecorderActivity } from './recorder-activity.js';
import { buildSidecar, writeSidecar } from './sidecar.js';

export interface ChunkCompletionOptions {
  dir: string;
  video: EncodedVideo;
  pipeline: DetectionPipeline | undefined;
  writer: ChunkWriter;
  index: ChunkIndex;
  activity: RecorderActivity;
  gates: { person: number; weapon: number };
  manifestEntries: number;
  housekeeping: SerialQueue;
  log: Logger;
  /** After each complete chunk, in this order: the status file, the data_manifest, the storage check. */
  afterChunk: { writeStatus(): Promise<void>; publishManifest(): Promise<void>; checkStorage(): Promise<void> };
}

/**
 * The recording itself: the encoder's pictures into the chunk writer, the detector's results into the
 * chunk's detection log, and each complete chunk given its sidecar, its index entry and its manifest line.
 */
export class ChunkCompletion {
  private readonly offs: (() => void)[] = [];

  constructor(private readonly o: ChunkCompletionOptions) {}

  /** Subscribes to the encoder (pictures, exits) and the detector (results). */
  start(): void {
    const { video, writer, pipeline, log, activity } = this.o;
    this.offs.push(video.subscribe((picture) => this.afterWrite(writer.write(picture, { fps: video.fps, width: video.width, height: video.height }))));
    this.offs.push(
      video.onExit((exit) => {
        log.warn({ at: exit.at }, `encoder exited (${exit.message}): the chunk in progress is completed`);
        this.afterWrite(writer.finish());
        void this.o.afterChunk.writeStatus();
      }),
    );
    const offDets = pipeline?.onResult((dets, frame) => {
      activity.lastDetectionAtMs = Date.now();
      writer.logDetections(detsLine(frame.timestampMs > 1e12 ? frame.timestampMs : Date.now(), dets));
    });
    if (offDets) this.offs.push(offDets);
  }

  /** At stop: no more pictures; the chunk in progress is completed and stored (a failure there is thrown). */
  async stop(): Promise<void> {
    for (const off of this.offs.splice(0)) off();
    const last = await this.o.writer.finish();
    if (last) {
      const sidecar = buildSidecar({ dir: this.o.dir, ...last }, this.o.gates);
      await this.o.housekeeping.run(() => this.store(sidecar));
    }
  }

  private afterWrite(p: Promise<CompletedChunk | null>): void {
    void p.then((c) => (c ? this.completed(c) : undefined)).catch((err: unknown) => this.o.log.error({ err }, 'chunk completion failed'));
  }

  private async completed(c: CompletedChunk): Promise<void> {
    const { log, afterChunk } = this.o;
    const sidecar: ChunkSidecar = buildSidecar({ dir: this.o.dir, ...c }, this.o.gates);
    await this.o.housekeeping.run(async () => {
      try {
        await this.store(sidecar);
      } catch (err) {
        // The chunk plays; recovery at the next start rebuilds the sidecar from the stream.
        log.warn({ chunk: c.name }, `sidecar or manifest not written: ${(err as Error).message}`);
      }
    });
    log.debug({ chunk: c.name, frames: c.frames, justified: sidecar.justified }, 'chunk complete');
    await afterChunk.writeStatus();
    await afterChunk.publishManifest();
    await afterChunk.checkStorage();
  }

  private async store(sidecar: ChunkSidecar): Promise<void> {
    await writeSidecar(this.o.dir, sidecar);
    this.o.index.add(sidecar);
    await writeManifest(this.o.dir, this.o.index.all(), this.o.manifestEntries);
  }
}
