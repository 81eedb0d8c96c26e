import { type Detection } from 'lookout/core/contracts';
import type { Frame } from '../../camera/src/service.js';
import type { DetectorBackend } from './backends/backend.js';
import { passesPersonGate } from './model/class-maps.js';
import type { DetectionPipeline, DetectionStage, DetectionThrottle, PublishedClass } from './service.js';

/**
 * Detection, then the stages later layers add (tracker, depth), in their order. Stages see every
 * detection the back-end kept, low-confidence ones too (the tracker's second association needs
 * them); the person gate applies to what leaves the pipeline.
 */
export class Pipeline implements DetectionPipeline {
  private stages: DetectionStage[] = [];
  private readonly listeners = new Set<(dets: Detection[], frame: Frame) => void>();
  throttle: DetectionThrottle = { suspended: false };
  /** When the current suspension began (ms), so that telemetry and the hub can say since when; null while running. */
  suspendedSince: number | null = null;

  constructor(
    private readonly backend: DetectorBackend,
    private readonly now: () => number = Date.now,
  ) {}

  addStage(stage: DetectionStage): () => void {
    this.stages = [...this.stages, stage].sort((a, b) => a.order - b.order);
    return () => {
      this.stages = this.stages.filter((s) => s !== stage);
    };
  }

  classes(): readonly PublishedClass[] {
    return this.backend.status().classes;
  }

  stageNames(): string[] {
    return this.stages.map((s) => s.name);
  }

  setThrottle(throttle: DetectionThrottle): void {
    if (throttle.suspended && !this.throttle.suspended) this.suspendedSince = this.now();
    if (!throttle.suspended) this.suspendedSince = null;
    this.throttle = { ...throttle };
  }

  onResult(listener: (dets: Detection[], frame: Frame) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async process(frame: Frame): Promise<Detection[]> {
    let dets = await this.backend.detect(frame);
    for (const stage of this.stages) {
      // A stage removed mid-frame belongs to a plugin that has stopped and released its model.
      if (this.stages.includes(stage)) dets = await stage.process(dets, frame);
    }
    const gated = dets.filter((d) => d.c !== 0 || passesPersonGate(d));
    for (const l of this.listeners) l(gated, frame);
    return gated;
  }
}
