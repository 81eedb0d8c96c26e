import * as ort from 'onnxruntime-node';
import { LookoutError } from 'lookout/core';

/**
 * The first input's shape as the ONNX graph declares it, read by loading the file in onnxruntime (so
 * a file that is not a loadable model is refused here too, not at the compile service). A symbolic
 * dimension is its name.
 */
export async function onnxInputShape(path: string): Promise<{ name: string; shape: (number | string)[] }> {
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(path);
  } catch (err) {
    throw new LookoutError('model_package_invalid', `${path} is not an ONNX model onnxruntime loads: ${(err as Error).message}`, { details: { path } });
  }
  try {
    const meta = session.inputMetadata[0];
    if (!meta || !meta.isTensor) throw new LookoutError('model_package_invalid', `${path} has no tensor input`, { details: { path } });
    return { name: meta.name, shape: [...meta.shape] };
  } finally {
    await session.release();
  }
}

export const shapeText = (shape: readonly (number | string)[]) => shape.join('x');
