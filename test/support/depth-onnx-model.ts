/**
 * A tiny monocular-depth ONNX model generated here (no download): one 1x1 convolution, so each output
 * pixel is weights . (normalized R, G, B) + bias at that pixel. Tests compute the expected depth map
 * from the reference preprocessing with `forward`.
 */

type Bytes = Uint8Array;

function concat(parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function varint(value: number): Bytes {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return Uint8Array.from(out);
}

const key = (field: number, wire: number) => varint((field << 3) | wire);
const int = (field: number, v: number) => concat([key(field, 0), varint(v)]);
const bytes = (field: number, b: Bytes) => concat([key(field, 2), varint(b.length), b]);
const str = (field: number, s: string) => bytes(field, new TextEncoder().encode(s));
const msg = (field: number, parts: Bytes[]) => bytes(field, concat(parts));
const FLOAT = 1;

function tensor(name: string, dims: number[], data: Float32Array): Bytes {
  return concat([...dims.map((d) => int(1, d)), int(2, FLOAT), str(8, name), bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))]);
}

function valueInfo(name: string, dims: Array<number | string>): Bytes {
  const shape = dims.map((d) => msg(1, [typeof d === 'number' ? int(1, d) : str(2, d)]));
  return concat([str(1, name), msg(2, [msg(1, [int(1, FLOAT), msg(2, shape)])])]);
}

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
  const node = concat([str(1, 'image'), str(1, 'conv_w'), str(1, 'conv_b'), str(2, 'depth'), str(3, 'conv'), str(4, 'Conv')]);
  const graph = concat([
    msg(1, [node]),
    str(2, 'mono_depth_test'),
    msg(5, [tensor('conv_w', [1, channels, 1, 1], w)]),
    msg(5, [tensor('conv_b', [1], Float32Array.of(bias))]),
    msg(11, [valueInfo('image', [1, channels, spec.height, spec.width])]),
    msg(12, [valueInfo('depth', [1, 1, spec.height, spec.width])]),
  ]);
  const model = concat([int(1, 8), str(2, 'lookout-test'), msg(8, [str(1, ''), int(2, 17)]), msg(7, [graph])]);
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
