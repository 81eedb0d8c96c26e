/**
 * Just enough of the protobuf wire format and of onnx.proto to write small ONNX models in tests
 * (no download, no protobuf dependency). The test model builders (onnx-model.ts, depth-onnx-model.ts)
 * describe their graphs with these pieces; field numbers are onnx.proto's.
 */

export type Bytes = Uint8Array;

export function concat(parts: Bytes[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Base-128 varint; negatives as 64-bit two's complement (10 bytes), as protobuf int64 does. */
function varint(value: number | bigint): Bytes {
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

const WIRE_VARINT = 0;
const WIRE_LEN = 2;
const tag = (field: number, wire: number) => varint((field << 3) | wire);
const pbInt = (field: number, v: number | bigint) => concat([tag(field, WIRE_VARINT), varint(v)]);
const pbBytes = (field: number, b: Bytes) => concat([tag(field, WIRE_LEN), varint(b.length), b]);
const pbString = (field: number, s: string) => pbBytes(field, new TextEncoder().encode(s));
const pbMessage = (field: number, parts: Bytes[]) => pbBytes(field, concat(parts));

// ---------------------------------------------------------------- ONNX messages

const FLOAT = 1;
const INT64 = 7;
const ATTR_INT = 2;
const ATTR_INTS = 7;

/** TensorProto with raw_data (little-endian); the element type follows the array type. */
export function tensorProto(name: string, dims: number[], data: Float32Array | BigInt64Array): Bytes {
  const raw = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return concat([
    ...dims.map((d) => pbInt(1, d)), // dims
    pbInt(2, data instanceof Float32Array ? FLOAT : INT64), // data_type
    pbString(8, name), // name
    pbBytes(9, raw), // raw_data
  ]);
}

export type Attr = { name: string; int: number } | { name: string; ints: number[] };

function attributeProto(a: Attr): Bytes {
  if ('int' in a) return concat([pbString(1, a.name), pbInt(3, a.int), pbInt(20, ATTR_INT)]);
  return concat([pbString(1, a.name), ...a.ints.map((i) => pbInt(8, i)), pbInt(20, ATTR_INTS)]);
}

/** NodeProto; the node is named `<op>_<first output>` unless `name` is given. */
export function nodeProto(op: string, inputs: string[], outputs: string[], attrs: Attr[] = [], name = `${op}_${outputs[0]}`): Bytes {
  return concat([
    ...inputs.map((i) => pbString(1, i)),
    ...outputs.map((o) => pbString(2, o)),
    pbString(3, name),
    pbString(4, op),
    ...attrs.map((a) => pbMessage(5, [attributeProto(a)])),
  ]);
}

/** ValueInfoProto for a float tensor; string dims are symbolic (dim_param). */
export function valueInfo(name: string, dims: (number | string)[]): Bytes {
  const shape = dims.map((d) => pbMessage(1, [typeof d === 'number' ? pbInt(1, d) : pbString(2, d)]));
  const tensorType = concat([pbInt(1, FLOAT), pbMessage(2, shape)]);
  return concat([pbString(1, name), pbMessage(2, [pbMessage(1, [tensorType])])]);
}

export interface GraphSpec {
  name: string;
  /** NodeProtos, in topological order. */
  nodes: Bytes[];
  /** TensorProtos. */
  initializers: Bytes[];
  /** ValueInfoProtos. */
  inputs: Bytes[];
  outputs: Bytes[];
}

/** A serialized ModelProto: IR version 8, default-domain opset 17, around one graph. */
export function onnxModel(graph: GraphSpec): Bytes {
  const graphProto = concat([
    ...graph.nodes.map((n) => pbMessage(1, [n])),
    pbString(2, graph.name),
    ...graph.initializers.map((t) => pbMessage(5, [t])),
    ...graph.inputs.map((v) => pbMessage(11, [v])),
    ...graph.outputs.map((v) => pbMessage(12, [v])),
  ]);
  return concat([
    pbInt(1, 8), // ir_version
    pbString(2, 'lookout-test'), // producer_name
    pbMessage(8, [pbString(1, ''), pbInt(2, 17)]), // opset_import: default domain, opset 17
    pbMessage(7, [graphProto]),
  ]);
}
