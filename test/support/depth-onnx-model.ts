/**
 * A tiny monocular-depth ONNX model generated here (no download): one 1x1 convolution, so each output
 * pixel is weights . (normalized R, G, B) + bias at that pixel. Tests compute the expected depth map
 * from the reference preprocessing with `forward`.
 */
import { nodeProto, onnxModel, tensorProto, valueInfo } from './onnx-proto.js';

export interface DepthModelSpec {
  height: number | string;
  width: number | string;
  /** Weights on normalized R, G, B. */
  weights?: [number, number, number];
  bias?: number;
  channels?: number;
}

export interface DepthModel {
  bytes: Uint8Array;
  /** The output plane for a [1, 3, H, W] input, in float64. */
  forward(input: Float32Array, h: number, w: number): Float64Array;
}

export function buildDepthModel(spec: DepthModelSpec): DepthModel {
  const weights = spec.weights ?? [1, 0, 0];
  const bias = spec.bias ?? 5;
  const channels = spec.channels ?? 3;
  const w = Float32Array.from({ length: channels }, (_, i) => weights[i] ?? 0);
  const model = onnxModel({
    name: 'mono_depth_test',
    nodes: [nodeProto('Conv', ['image', 'conv_w', 'conv_b'], ['depth'], [], 'conv')],
    initializers: [tensorProto('conv_w', [1, channels, 1, 1], w), tensorProto('conv_b', [1], Float32Array.of(bias))],
    inputs: [valueInfo('image', [1, channels, spec.height, spec.width])],
    outputs: [valueInfo('depth', [1, 1, spec.height, spec.width])],
  });
  return {
    bytes: model,
    forward(input, h, wd) {
      const plane = h * wd;
      const out = new Float64Array(plane);
      for (let i = 0; i < plane; i++) {
        let acc = bias;
        for (let c = 0; c < channels; c++) acc += Math.fround(w[c]!) * input[c * plane + i]!;
        out[i] = acc;
      }
      return out;
    },
  };
}
