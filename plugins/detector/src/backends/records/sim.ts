import type { DetectorBackend } from '../backend.js';
import { defineDetectorBackend } from '../backend-record.js';

/** RF_DETR_BACKEND=sim: detections from the simulated scene's ground truth, with seeded noise. */
export const simRecord = defineDetectorBackend({
  name: 'sim',
  description: 'simulated detections from the ground truth of simulated frames (LOOKOUT_SOURCE=sim), no model',
  capabilities: { modelFormats: [], needsModel: false, runsOn: 'this-machine' },
  statusFields: ['backend', 'classMap', 'classes', 'inputShape'],
  async open(o): Promise<DetectorBackend> {
    const { SimDetectorBackend } = await import('../sim-backend.js');
    return new SimDetectorBackend(o.sim);
  },
});
