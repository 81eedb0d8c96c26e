/**
 * A tiny monocular-depth ONNX model generated here (no download; encoded with the onnx-proto package's
 * protobufjs classes): one 1x1 convolution, so each output pixel is weights . (normalized R, G, B) +
 * bias at that pixel. Tests compute the expected depth map from the reference preprocessing with `forward`.
 */
import onnxProto from 'onnx-proto';

// onnx-proto is CommonJS (module.exports = { onnx }), so Node's ESM loader gives it as the default export.
const { onnx } = onnxProto;
const { DataType } = onnx.TensorProto;

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

/** TensorProto of floats as raw_data (little-endian). */
function floatTensor(name: string, dims: number[], data: Float32Array): onnxProto.onnx.ITensorProto {
  return { name, dims, dataType: DataType.FLOAT, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** ValueInfoProto for a float tensor; string dims are symbolic (dim_param). */
function floatValueInfo(name: string, dims: (number | string)[]): onnxProto.onnx.IValueInfoProto {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType: DataType.FLOAT, shape: { dim } } } };
}

export function buildDepthModel(spec: DepthModelSpec): DepthModel {
  const weights = spec.weights ?? [1, 0, 0];
  const bias = spec.bias ?? 5;
  const channels = spec.channels ?? 3;
  const w = Float32Array.from({ length: channels }, (_, i) => weights[i] ?? 0);
  // IR version 8, default-domain opset 17. The copy makes a plain Uint8Array of protobufjs's pooled Buffer.
  const model = new Uint8Array(
    onnx.ModelProto.encode({
      irVersion: 8,
      producerName: 'lookout-test',
      opsetImport: [{ domain: '', version: 17 }],
      graph: {
        name: 'mono_depth_test',
        node: [{ name: 'conv', opType: 'Conv', input: ['image', 'conv_w', 'conv_b'], output: ['depth'] }],
        initializer: [floatTensor('conv_w', [1, channels, 1, 1], w), floatTensor('conv_b', [1], Float32Array.of(bias))],
        input: [floatValueInfo('image', [1, channels, spec.height, spec.width])],
        output: [floatValueInfo('depth', [1, 1, spec.height, spec.width])],
      },
    }).finish(),
  );
  return {
    bytes: model,
    forward(input, h, wd) {
      const plane = h * wd;
      const out = new Float64Array(plane);
      for (let i = 0; i < plane; i++) {
        let acc = bias;
        for (let c = 0; c < channels; c++) acc += Math.fround(w[c]) * input[c * plane + i];
        out[i] = acc;
      }
      return out;
    },
  };
}
