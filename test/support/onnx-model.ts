import { seededRandom as simRandom } from '../../lib/random/seeded-random.js';
/**
 * A small, real RF-DETR-shaped ONNX model generated here (no download; encoded with the onnx-proto
 * package's protobufjs classes), and detector packages around it. The graph pools the input on a grid,
 * then two dense layers with seeded weights give boxes (sigmoid, [1,Q,4]) and logits ([1,Q,C]), so
 * every output depends on every input pixel region and channel, and `forward` recomputes it in plain
 * TypeScript for reference checks.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';

// onnx-proto is CommonJS (module.exports = { onnx }), so Node's ESM loader gives it as the default export.
const { onnx } = onnxProto;
const { DataType } = onnx.TensorProto;
const { AttributeType } = onnx.AttributeProto;

// ---------------------------------------------------------------- ONNX pieces

/** TensorProto with raw_data (little-endian); the element type follows the array type. */
function tensor(name: string, dims: number[], data: Float32Array | BigInt64Array): onnxProto.onnx.ITensorProto {
  return {
    name,
    dims,
    dataType: data instanceof Float32Array ? DataType.FLOAT : DataType.INT64,
    rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

/** ValueInfoProto for a float tensor; string dims are symbolic (dim_param). */
function floatValueInfo(name: string, dims: (number | string)[]): onnxProto.onnx.IValueInfoProto {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType: DataType.FLOAT, shape: { dim } } } };
}

/** NodeProto named `<op>_<first output>`. */
function node(opType: string, input: string[], output: string[], attribute: onnxProto.onnx.IAttributeProto[] = []): onnxProto.onnx.INodeProto {
  return { name: `${opType}_${output[0]}`, opType, input, output, attribute };
}

const ints = (name: string, values: number[]): onnxProto.onnx.IAttributeProto => ({ name, type: AttributeType.INTS, ints: values });
const int = (name: string, value: number): onnxProto.onnx.IAttributeProto => ({ name, type: AttributeType.INT, i: value });

// ---------------------------------------------------------------- the test model

export interface TestModelSpec {
  height: number;
  width: number;
  /** Q */
  queries: number;
  /** C */
  classes: number;
  seed?: number;
  /** Pooling grid per side; H and W must be multiples of it. */
  grid?: number;
  inputName?: string;
  /** RF-DETR's export names them dets and labels. */
  boxesName?: string;
  logitsName?: string;
  symbolicBatch?: boolean;
  /** Offset added to every logit bias: raises or lowers how many scores pass a threshold. */
  logitBias?: number;
}

export interface TestModel {
  spec: Required<TestModelSpec>;
  bytes: Uint8Array;
  /** The model's outputs for `input` ([1,3,H,W]), computed in float64 from the same weights. */
  forward(input: Float32Array): { boxes: Float64Array; logits: Float64Array };
}

/** Seeded numbers in [0, 1): the simulator's mulberry32, so every run builds the same model. */
export function seededRandom(seed: number): () => number {
  const random = simRandom(seed);
  return () => random.next();
}

export function buildTestDetrModel(input: TestModelSpec): TestModel {
  const spec: Required<TestModelSpec> = {
    seed: 7,
    grid: 4,
    inputName: 'input',
    boxesName: 'dets',
    logitsName: 'labels',
    symbolicBatch: false,
    logitBias: 0,
    ...input,
  };
  const { height: H, width: W, queries: Q, classes: C, grid: G } = spec;
  if (H % G !== 0 || W % G !== 0) throw new Error(`test model: ${H}x${W} is not a multiple of the ${G} grid`);
  const F = 3 * G * G;
  const rnd = seededRandom(spec.seed);
  const uniform = (lo: number, hi: number) => lo + (hi - lo) * rnd();

  // Gemm B is [F, N]; weights small so the pooled features (about -2..2.6) move outputs visibly.
  const wBoxes = Float32Array.from({ length: F * Q * 4 }, () => uniform(-0.3, 0.3));
  const bBoxes = Float32Array.from({ length: Q * 4 }, (_, i) => (i % 4 < 2 ? uniform(-1.5, 1.5) : uniform(-2.2, -0.6)));
  const wLogits = Float32Array.from({ length: F * Q * C }, () => uniform(-0.5, 0.5));
  const bLogits = Float32Array.from({ length: Q * C }, () => uniform(-4, 1.5) + spec.logitBias);

  const kh = H / G;
  const kw = W / G;
  const nodes = [
    node('AveragePool', [spec.inputName], ['pooled'], [ints('kernel_shape', [kh, kw]), ints('strides', [kh, kw])]),
    node('Flatten', ['pooled'], ['features'], [int('axis', 1)]),
    node('Gemm', ['features', 'w_boxes', 'b_boxes'], ['boxes_linear']),
    node('Sigmoid', ['boxes_linear'], ['boxes_flat']),
    node('Reshape', ['boxes_flat', 'boxes_shape'], [spec.boxesName]),
    node('Gemm', ['features', 'w_logits', 'b_logits'], ['logits_flat']),
    node('Reshape', ['logits_flat', 'logits_shape'], [spec.logitsName]),
  ];
  const initializer = [
    tensor('w_boxes', [F, Q * 4], wBoxes),
    tensor('b_boxes', [Q * 4], bBoxes),
    tensor('w_logits', [F, Q * C], wLogits),
    tensor('b_logits', [Q * C], bLogits),
    tensor('boxes_shape', [3], BigInt64Array.from([1n, BigInt(Q), 4n])),
    tensor('logits_shape', [3], BigInt64Array.from([1n, BigInt(Q), BigInt(C)])),
  ];
  // IR version 8, default-domain opset 17. The copy makes a plain Uint8Array of protobufjs's pooled Buffer.
  const bytes = new Uint8Array(
    onnx.ModelProto.encode({
      irVersion: 8,
      producerName: 'lookout-test',
      opsetImport: [{ domain: '', version: 17 }],
      graph: {
        name: 'rf_detr_test',
        node: nodes,
        initializer,
        input: [floatValueInfo(spec.inputName, [spec.symbolicBatch ? 'batch' : 1, 3, H, W])],
        output: [floatValueInfo(spec.boxesName, [1, Q, 4]), floatValueInfo(spec.logitsName, [1, Q, C])],
      },
    }).finish(),
  );

  const forward = (x: Float32Array) => {
    if (x.length !== 3 * H * W) throw new Error(`forward: input has ${x.length} values, expected ${3 * H * W}`);
    const feat = new Float64Array(F);
    for (let c = 0; c < 3; c++) {
      for (let gy = 0; gy < G; gy++) {
        for (let gx = 0; gx < G; gx++) {
          let sum = 0;
          for (let y = gy * kh; y < (gy + 1) * kh; y++) {
            for (let xx = gx * kw; xx < (gx + 1) * kw; xx++) sum += x[c * H * W + y * W + xx];
          }
          feat[c * G * G + gy * G + gx] = sum / (kh * kw);
        }
      }
    }
    const dense = (w: Float32Array, b: Float32Array, n: number) => {
      const out = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        let acc = b[j];
        for (let f = 0; f < F; f++) acc += feat[f] * w[f * n + j];
        out[j] = acc;
      }
      return out;
    };
    const boxes = dense(wBoxes, bBoxes, Q * 4).map((v) => 1 / (1 + Math.exp(-v)));
    const logits = dense(wLogits, bLogits, Q * C);
    return { boxes, logits };
  };

  return { spec, bytes, forward };
}

// ---------------------------------------------------------------- tar packages

export interface TarFile {
  name: string;
  data: Uint8Array | string;
  /** Directory entries carry no data. */
  directory?: boolean;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

/** A POSIX ustar archive (names up to 100 bytes, or 255 split into prefix and name). */
export function writeTar(files: TarFile[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const enc = new TextEncoder();
  for (const f of files) {
    const data = typeof f.data === 'string' ? enc.encode(f.data) : f.data;
    const header = new Uint8Array(512);
    let name = f.directory ? `${f.name.replace(/\/$/, '')}/` : f.name;
    let prefix = '';
    if (name.length > 100) {
      const cut = name.lastIndexOf('/', name.length - 2);
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
    }
    const put = (s: string, at: number) => header.set(enc.encode(s), at);
    put(name, 0);
    put(f.directory ? '0000755\0' : '0000644\0', 100);
    put('0000000\0', 108);
    put('0000000\0', 116);
    put(octal(f.directory ? 0 : data.length, 12), 124);
    put(octal(1_700_000_000, 12), 136);
    put('        ', 148);
    put(f.directory ? '5' : '0', 156);
    put('ustar\0', 257);
    put('00', 263);
    put('lookout', 265);
    put('lookout', 297);
    put(prefix, 345);
    let sum = 0;
    for (const b of header) sum += b;
    put(octal(sum, 7) + ' ', 148);
    parts.push(header);
    if (!f.directory) {
      parts.push(data);
      const pad = (512 - (data.length % 512)) % 512;
      if (pad) parts.push(new Uint8Array(pad));
    }
  }
  parts.push(new Uint8Array(1024));
  return concat(parts);
}

/** labels.json as a package carries it (a type alias, so it fits the schema's open object type). */
export type TestLabels = {
  classes: string[];
  class_map: 'production' | 'omni15' | 'custom';
  version: string;
  ontology_hash: string;
  train_job_id: string;
  input_shape: [1, 3, number, number];
  remap?: Record<string, number>;
};

export function testLabels(size: number, overrides: Partial<TestLabels> = {}): TestLabels {
  return {
    classes: ['person', 'bicycle', 'car', 'bus', 'train', 'truck', 'backpack', 'handbag', 'suitcase', 'cell_phone', 'gun', 'knife', 'rifle', 'shotgun'],
    class_map: 'production',
    version: '2025.06.1',
    ontology_hash: 'sha256:3f1c0de5',
    train_job_id: 'train-0042',
    input_shape: [1, 3, size, size],
    ...overrides,
  };
}

export function testConfig(model: string, backend: 'snpe' | 'onnx' = 'onnx') {
  return {
    model,
    backend,
    backend_properties: { runtime: backend === 'snpe' ? 'dsp' : 'cpu', performance_profile: 'high_performance' },
  };
}

export interface PackageContents {
  modelName: string;
  model: Uint8Array;
  config?: unknown;
  /** Omit to leave labels.json out. */
  labels?: unknown;
  /** Put everything under this folder, as `tar -C parent folder` would. */
  topFolder?: string;
}

/** The package as tar bytes. */
export function packageTar(c: PackageContents): Uint8Array {
  const at = (n: string) => (c.topFolder ? `${c.topFolder}/${n}` : n);
  const files: TarFile[] = [];
  if (c.topFolder) files.push({ name: c.topFolder, data: '', directory: true });
  files.push({ name: at('config.json'), data: JSON.stringify(c.config ?? testConfig(c.modelName), null, 2) });
  if (c.labels !== undefined) files.push({ name: at('labels.json'), data: JSON.stringify(c.labels, null, 2) });
  files.push({ name: at(c.modelName), data: c.model });
  return writeTar(files);
}

export async function writePackage(dir: string, c: PackageContents, fileName = 'rf_detr_edge4.tar'): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, fileName);
  await writeFile(path, packageTar(c));
  return path;
}

/** A bare model file, with labels.json beside it when given. */
export async function writeBareModel(dir: string, name: string, model: Uint8Array, labels?: unknown): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await writeFile(path, model);
  if (labels !== undefined) await writeFile(join(dir, 'labels.json'), JSON.stringify(labels));
  return path;
}

// ---------------------------------------------------------------- frames

/**
 * A deterministic BGR888 frame with structure in every channel and region (gradients, a few solid
 * blocks, seeded noise), so resampling, channel order and pooling mistakes all change the outputs.
 */
export function testFrameBytes(width = 640, height = 640, seed = 1): Uint8Array {
  const rnd = seededRandom(seed);
  const data = new Uint8Array(width * height * 3);
  const blocks = Array.from({ length: 6 }, () => ({
    x: Math.floor(rnd() * width * 0.8),
    y: Math.floor(rnd() * height * 0.8),
    w: 20 + Math.floor(rnd() * width * 0.3),
    h: 20 + Math.floor(rnd() * height * 0.3),
    bgr: [Math.floor(rnd() * 256), Math.floor(rnd() * 256), Math.floor(rnd() * 256)],
  }));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      data[o] = (x * 255) / width;
      data[o + 1] = (y * 255) / height;
      data[o + 2] = ((x + y) * 127) / (width + height) + rnd() * 64;
      for (const b of blocks) {
        if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h) {
          data[o] = b.bgr[0]!;
          data[o + 1] = b.bgr[1]!;
          data[o + 2] = b.bgr[2]!;
        }
      }
    }
  }
  return data;
}
