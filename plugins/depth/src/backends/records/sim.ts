import type { DepthBackend } from '../depth-backend.js';
import { defineDepthBackend } from '../depth-backend-record.js';

/** MONO_DEPTH_BACKEND=sim: a perfect depth sensor over the simulated scene's ground truth. */
export const simDepthRecord = defineDepthBackend({
  name: 'sim',
  description: "depth from the simulated scene's ground truth (LOOKOUT_SOURCE=sim), no model",
  capabilities: { modelFormats: [], needsModel: false, needsSimulatedFrames: true, runsOn: 'this-machine' },
  statusFields: ['name', 'source'],
  async open(): Promise<DepthBackend> {
    const { SimDepthBackend } = await import('../sim-depth-backend.js');
    return new SimDepthBackend();
  },
});
