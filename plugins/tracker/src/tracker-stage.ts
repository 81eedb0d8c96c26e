import { toLookoutError, type LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import type { Frame } from '../../camera/src/service.js';
import type { DetectionStage } from '../../detector/src/service.js';
import type { MultiObjectTracker } from './tracking/byte-tracker.js';

export interface TrackerStageOptions {
  tracker: MultiObjectTracker;
  /** The time one tracker frame stands for; gaps are measured in these (a lowered stride gives dt > 1). */
  frameMs: number;
  /** Told when a frame's detections could not be tracked (they pass on without track_id). */
  onError?: (err: LookoutError) => void;
}

/** Order of the tracker among the pipeline's stages: before depth, which keys nothing on ids but runs later. */
export const TRACKER_STAGE_ORDER = 10;

/** The detector pipeline stage that adds track_id; time between frames comes from their timestamps. */
export class TrackerStage implements DetectionStage {
  readonly name = 'tracker';
  readonly order = TRACKER_STAGE_ORDER;
  private lastTimestamp: number | undefined;

  constructor(private readonly options: TrackerStageOptions) {}

  process(dets: Detection[], frame: Frame): Detection[] {
    const elapsed = this.lastTimestamp === undefined ? this.options.frameMs : frame.timestampMs - this.lastTimestamp;
    // A clock that stands still or steps back (a looping sim clip restarts its time) counts as one frame.
    const dt = Number.isFinite(elapsed) && elapsed > 0 ? elapsed / this.options.frameMs : 1;
    this.lastTimestamp = frame.timestampMs;
    try {
      return this.options.tracker.update(dets, { dt });
    } catch (err) {
      // A malformed detection must not cost the frame: it goes on untracked and the failure is reported.
      this.options.onError?.(toLookoutError(err));
      return dets;
    }
  }
}
