import * as ort from 'onnxruntime-node';

/**
 * An onnxruntime-node session on the CPU with every graph optimization, as the onnx back-ends of the
 * detector and of depth run their models; `threads` sets the intra-op threads (default: onnxruntime's
 * choice). Load errors are thrown as onnxruntime gives them: each caller names its own model.
 */
export function createCpuSession(model: Uint8Array, threads?: number): Promise<ort.InferenceSession> {
  const options: ort.InferenceSession.SessionOptions = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
  if (threads !== undefined) options.intraOpNumThreads = threads;
  return ort.InferenceSession.create(model, options);
}
