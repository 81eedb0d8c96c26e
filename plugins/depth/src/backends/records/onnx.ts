import type { DepthBackend } from '../depth-backend.js';
import { defineDepthBackend, requireDepthModelPath } from '../depth-backend-record.js';

/** MONO_DEPTH_BACKEND=onnx: a monocular depth model on the CPU with onnxruntime-node. */
export const onnxDepthRecord = defineDepthBackend({
  name: 'onnx',
  description: 'monocular depth model (ONNX, [1, 3, H, W] in, one depth plane out) on the CPU with onnxruntime-node',
  capabilities: { modelFormats: ['onnx'], needsModel: true, needsSimulatedFrames: false, runsOn: 'this-machine' },
  statusFields: ['name', 'source', 'inputSize'],
  async open(o): Promise<DepthBackend> {
    const { OnnxDepthBackend } = await import('../onnx-depth-backend.js');
    return OnnxDepthBackend.open({
      modelPath: requireDepthModelPath(onnxDepthRecord.name, o.modelPath),
      kit: o.kit,
      ...(o.output ? { output: o.output } : {}),
      ...(o.scale !== undefined ? { scale: o.scale } : {}),
      ...(o.threads !== undefined ? { threads: o.threads } : {}),
    });
  },
});
