import { LookoutError } from 'lookout/core';
import type { Frame } from '../../../camera/src/service.js';
import type { DepthMap } from '../fusion.js';
import { renderTruthDepthMap } from '../truth-depth.js';
import type { DepthBackend } from './depth-backend.js';
import { simDepthRecord } from './records/sim.js';

/** MONO_DEPTH_BACKEND=sim: a perfect depth sensor over the simulated scene's ground truth. */
export class SimDepthBackend implements DepthBackend {
  readonly name = simDepthRecord.name;
  readonly source = 'ground truth';

  constructor(private readonly backgroundM = 50) {}

  async estimate(frame: Frame): Promise<DepthMap> {
    if (!frame.truth) {
      throw new LookoutError('backend_unavailable', `the ${this.name} depth back-end needs frames with ground truth (LOOKOUT_SOURCE=sim)`);
    }
    return renderTruthDepthMap(frame.truth, frame, this.backgroundM);
  }

  async close(): Promise<void> {}
}
