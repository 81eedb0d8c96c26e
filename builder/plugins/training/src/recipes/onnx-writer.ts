/**
 * A minimal ONNX (protobuf) writer for the test-double recipe: enough of ModelProto to write a small
 * RF-DETR-shaped graph that onnxruntime loads. Hand-encoded because the builder ships no protobuf
 * library at run time (onnx-proto is a dev dependency); field numbers are onnx.proto's.
 */

type Field = { n: number; varint?: number | bigint; bytes?: Uint8Array };

function varint(value: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}

/** One protobuf message from its fields, in order (wire types 0 and 2 only). */
function message(fields: Field[]): Uint8Array {
  const parts: number[] = [];
  for (const f of fields) {
    if (f.bytes !== undefined) {
      parts.push(...varint((f.n << 3) | 2), ...varint(f.bytes.length));
      for (const b of f.bytes) parts.push(b);
    } else {
      parts.push(...varint((f.n << 3) | 0), ...varint(f.varint!));
    }
  }
  return Uint8Array.from(parts);
}

const str = (n: number, s: string): Field => ({ n, bytes: new TextEncoder().encode(s) });
const msg = (n: number, m: Uint8Array): Field => ({ n, bytes: m });
const num = (n: number, v: number | bigint): Field => ({ n, varint: v });

const FLOAT = 1;
const INT64 = 7;

function floatTensor(name: string, dims: number[], data: Float32Array): Uint8Array {
  return message([...dims.map((d) => num(1, d)), num(2, FLOAT), str(8, name), { n: 9, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) }]);
}

function int64Tensor(name: string, values: number[]): Uint8Array {
  const data = BigInt64Array.from(values.map(BigInt));
  return message([num(1, values.length), num(2, INT64), str(8, name), { n: 9, bytes: new Uint8Array(data.buffer) }]);
}

function valueInfo(name: string, dims: number[]): Uint8Array {
  const shape = message(dims.map((d) => msg(1, message([num(1, d)]))));
  const tensorType = message([num(1, FLOAT), msg(2, shape)]);
  return message([str(1, name), msg(2, message([msg(1, tensorType)]))]);
}

function node(op: string, inputs: string[], outputs: string[], attributes: Uint8Array[] = []): Uint8Array {
  return message([
    ...inputs.map((i) => str(1, i)),
    ...outputs.map((o) => str(2, o)),
    str(3, `${op}_${outputs[0]}`),
    str(4, op),
    ...attributes.map((a) => msg(5, a)),
  ]);
}

/** AttributeProto of type INT (2). */
const intAttribute = (name: string, value: number) => message([str(1, name), num(3, value), num(20, 2)]);

export interface DetrGraph {
  height: number;
  width: number;
  queries: number;
  classes: number;
  /** Weights: the recipe's "trained" numbers (any finite values). */
  weights: () => number;
}

/**
 * input [1,3,H,W] → GlobalAveragePool → Flatten → two Gemm heads: dets [1,Q,4] (sigmoid) and
 * labels [1,Q,C], the names and shapes of an RF-DETR export that the detector's ONNX back-end reads.
 */
export function detrOnnx(g: DetrGraph): Uint8Array {
  const { queries: Q, classes: C } = g;
  const fill = (n: number) => Float32Array.from({ length: n }, g.weights);
  const graph = message([
    msg(1, node('GlobalAveragePool', ['input'], ['pooled'])),
    msg(1, node('Flatten', ['pooled'], ['features'], [intAttribute('axis', 1)])),
    msg(1, node('Gemm', ['features', 'w_boxes', 'b_boxes'], ['boxes_linear'])),
    msg(1, node('Sigmoid', ['boxes_linear'], ['boxes_flat'])),
    msg(1, node('Reshape', ['boxes_flat', 'boxes_shape'], ['dets'])),
    msg(1, node('Gemm', ['features', 'w_logits', 'b_logits'], ['logits_flat'])),
    msg(1, node('Reshape', ['logits_flat', 'logits_shape'], ['labels'])),
    str(2, 'rf_detr_test_double'),
    msg(5, floatTensor('w_boxes', [3, Q * 4], fill(3 * Q * 4))),
    msg(5, floatTensor('b_boxes', [Q * 4], fill(Q * 4))),
    msg(5, floatTensor('w_logits', [3, Q * C], fill(3 * Q * C))),
    msg(5, floatTensor('b_logits', [Q * C], fill(Q * C))),
    msg(5, int64Tensor('boxes_shape', [1, Q, 4])),
    msg(5, int64Tensor('logits_shape', [1, Q, C])),
    msg(11, valueInfo('input', [1, 3, g.height, g.width])),
    msg(12, valueInfo('dets', [1, Q, 4])),
    msg(12, valueInfo('labels', [1, Q, C])),
  ]);
  // IR version 8, default-domain opset 17.
  return message([num(1, 8), str(2, 'lookout-test-double'), msg(7, graph), msg(8, message([str(1, ''), num(2, 17)]))]);
}
