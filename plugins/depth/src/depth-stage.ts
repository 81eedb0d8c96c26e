import { toLookoutError, type LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { CameraIntrinsics, Frame } from '../../camera/src/service.js';
import type { DetectionStage } from '../../detector/src/service.js';
import type { DepthBackend } from './backends/depth-backend.js';
import { checkIntrinsics, fuseDetection, medianDepthInBox, scaleIntrinsics, type DepthMap, type Size } from './fusion.js';

export interface DepthStageOptions {
  /** Or the back-end still loading its model: frames that need depth wait for it. */
  backend: DepthBackend | PromiseLike<DepthBackend>;
  /** Intrinsics of the camera at `intrinsicsSize`; frames of another size get them scaled. */
  intrinsics: CameraIntrinsics;
  intrinsicsSize: Size;
  /** Depth estimates per second (MONO_DEPTH_FPS); frames in between reuse the latest map. */
  fps: number;
  onError?: (err: LookoutError) => void;
}

/** After the tracker: fusion only reads boxes, and running last keeps x, y, z off frames that fail earlier. */
export const DEPTH_STAGE_ORDER = 20;

/**
 * The pipeline stage that adds x, y, z. The depth model runs at MONO_DEPTH_FPS, below the detector
 * rate, so most frames reuse the latest depth map: objects move little in 1/8 s and the median over
 * a region absorbs it. A map older than three periods is not used (the model has been failing).
 */
export class DepthStage implements DetectionStage {
  readonly name = 'depth';
  readonly order = DEPTH_STAGE_ORDER;
  private map: DepthMap | undefined;
  private mapAt = -Infinity;
  private nextAt = -Infinity;
  private readonly periodMs: number;

  constructor(private readonly options: DepthStageOptions) {
    checkIntrinsics(options.intrinsics);
    this.periodMs = 1000 / options.fps;
  }

  async process(dets: Detection[], frame: Frame): Promise<Detection[]> {
    const now = frame.timestampMs;
    // Time stepping back (a looping clip) starts the schedule afresh.
    if (now < this.mapAt) this.nextAt = -Infinity;
    if (dets.length > 0 && now >= this.nextAt) {
      // Keep the average rate at fps even when frames do not land on the period (10 Hz frames, 8 Hz depth).
      this.nextAt = now - this.nextAt > this.periodMs ? now + this.periodMs : this.nextAt + this.periodMs;
      try {
        const backend = await this.options.backend;
        this.map = await backend.estimate(frame);
        this.mapAt = now;
      } catch (err) {
        this.options.onError?.(toLookoutError(err));
      }
    }
    const usable = this.map !== undefined && now - this.mapAt <= 3 * this.periodMs && now >= this.mapAt;
    const k = sameSize(frame, this.options.intrinsicsSize)
      ? this.options.intrinsics
      : scaleIntrinsics(this.options.intrinsics, this.options.intrinsicsSize, frame);
    return dets.map((d) => {
      let depth: number | undefined;
      if (usable) {
        try {
          depth = medianDepthInBox(this.map!, [d.b[0], d.b[1], d.b[2], d.b[3]], frame);
        } catch (err) {
          this.options.onError?.(toLookoutError(err));
        }
      }
      return fuseDetection(d, depth, k);
    });
  }
}

const sameSize = (a: Size, b: Size): boolean => a.width === b.width && a.height === b.height;
