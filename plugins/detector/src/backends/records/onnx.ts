import type { DetectorBackend } from '../backend.js';
import { defineDetectorBackend, MODEL_STATUS_FIELDS, requireModelPath } from '../backend-record.js';

/** RF_DETR_BACKEND=onnx: CPU inference with onnxruntime-node on an RF-DETR ONNX export. */
export const onnxRecord = defineDetectorBackend({
  name: 'onnx',
  description: 'RF-DETR ONNX export on the CPU with onnxruntime-node',
  capabilities: { modelFormats: ['onnx'], needsModel: true, runsOn: 'this-machine' },
  statusFields: MODEL_STATUS_FIELDS,
  async open(o): Promise<DetectorBackend> {
    const { OnnxBackend } = await import('../onnx-backend.js');
    return OnnxBackend.create({
      modelPath: requireModelPath(onnxRecord.name, o.modelPath),
      inputSize: o.inputSize,
      topK: o.topK,
      scoreThreshold: o.scoreThreshold,
      threads: o.threads,
      modelPackage: o.modelPackage,
    });
  },
});
