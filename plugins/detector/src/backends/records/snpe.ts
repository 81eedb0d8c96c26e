import type { DetectorBackend } from '../backend.js';
import { defineDetectorBackend, MODEL_STATUS_FIELDS, requireModelPath } from '../backend-record.js';

/** RF_DETR_BACKEND=snpe: the DLC on the DSP through the native addon (the fleet's load format). */
export const snpeRecord = defineDetectorBackend({
  name: 'snpe',
  description: 'RF-DETR .dlc on the DSP through the native addon and the vendor SNPE runtime',
  capabilities: { modelFormats: ['dlc'], needsModel: true, runsOn: 'dsp-addon', fleetDefault: true },
  statusFields: MODEL_STATUS_FIELDS,
  async open(o): Promise<DetectorBackend> {
    const { SnpeBackend } = await import('../snpe-backend.js');
    return SnpeBackend.create({
      modelPath: requireModelPath(snpeRecord.name, o.modelPath),
      inputSize: o.inputSize,
      topK: o.topK,
      scoreThreshold: o.scoreThreshold,
      env: o.env,
      addonPath: o.snpe?.addonPath,
      binding: o.snpe?.binding,
      modelPackage: o.modelPackage,
    });
  },
});
