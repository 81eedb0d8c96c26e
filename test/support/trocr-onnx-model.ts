/**
 * A small, real TrOCR-shaped encoder/decoder pair generated here (no download; encoded with the
 * onnx-proto package's protobufjs classes), with the exact I/O names and shapes of the plugin's
 * contract (plugins/trocr/src/model/trocr-contract.ts), and a third graph for reference checks:
 *
 * - encoder: 16 px patches (a strided convolution), two learned tokens, positions, then per layer the
 *   cross-attention key/value projections: `present.<i>.encoder.key|value` [1, 8, 578, 32];
 * - decoder: one step of a 6-layer transformer (8 heads of 32: self-attention over the static
 *   19-slot cache plus the new token, cross-attention over the encoder's caches, a ReLU MLP) and the
 *   LM head, with the right-aligned mask the contract describes;
 * - full decoder: the same weights over a whole sequence [1, T] with a causal mask and no cache at
 *   all, so a greedy decode through it is the reference the cached step-by-step decode must equal.
 *
 * Weights are seeded; the test sets where EOS comes (a "stop" dimension the position embedding
 * raises at one step and the LM head maps to EOS, which every layer leaves untouched), or none, and
 * can build graphs that fail at a given step or break the contract (320 input, other names or shapes).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { seededRandom } from './onnx-model.js';

// onnx-proto is CommonJS (module.exports = { onnx }), so Node's ESM loader gives it as the default export.
const { onnx } = onnxProto;
const { DataType } = onnx.TensorProto;
const { AttributeType } = onnx.AttributeProto;
type INode = onnxProto.onnx.INodeProto;
type ITensor = onnxProto.onnx.ITensorProto;

export const TEST_TROCR = Object.freeze({ LAYERS: 6, HEADS: 8, HEAD_DIM: 32, D: 256, SELF: 19, CROSS: 578, START: 2, EOS: 2, PAD: 1 });

export interface TrocrModelSpec {
  seed?: number;
  /** Vocabulary size (the LM head's width); ids 0..3 are <s>, <pad>, </s>, <unk> and are never produced but EOS. */
  vocab?: number;
  /** The step at which the decoder emits EOS (that many tokens come before it); undefined: never (the loop stops at 20). */
  eosAtStep?: number;
  /** The step decoder throws when run at this step (its position table is that short): a graph that crashes in use. */
  crashAtStep?: number;
  /** Encoder input side; 384 per the spec (320 makes 402 positions instead of 578). */
  inputSize?: number;
  /** MLP width and the encoder's patch embedding width. */
  ffn?: number;
  patchDim?: number;
  /** Contract breakers for the load checks. */
  inputIdsName?: string;
  selfCacheLen?: number;
  /** The element type of input_ids and cache_position (some compiled exports take int32). */
  indexType?: 'int64' | 'int32' | 'float32';
}

export interface TrocrModelPair {
  spec: Required<Omit<TrocrModelSpec, 'eosAtStep' | 'crashAtStep'>> & Pick<TrocrModelSpec, 'eosAtStep' | 'crashAtStep'>;
  encoder: Uint8Array;
  decoder: Uint8Array;
  /** [1, T] ids → logits [1, T, vocab], no cache: the reference. Inputs `input_ids` and the encoder's outputs as `past_key_values.<i>.encoder.*`. */
  fullDecoder: Uint8Array;
}

// ---------------------------------------------------------------- ONNX pieces

function floatTensor(name: string, dims: number[], data: Float32Array): ITensor {
  return { name, dims, dataType: DataType.FLOAT, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}
function int64Tensor(name: string, dims: number[], values: number[]): ITensor {
  const data = BigInt64Array.from(values.map((v) => BigInt(v)));
  return { name, dims, dataType: DataType.INT64, rawData: new Uint8Array(data.buffer) };
}
const ELEM = { float32: DataType.FLOAT, int64: DataType.INT64, int32: DataType.INT32 } as const;
function valueInfo(name: string, type: keyof typeof ELEM, dims: (number | string)[]): onnxProto.onnx.IValueInfoProto {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType: ELEM[type], shape: { dim } } } };
}
const ints = (name: string, values: number[]): onnxProto.onnx.IAttributeProto => ({ name, type: AttributeType.INTS, ints: values });
const int = (name: string, value: number): onnxProto.onnx.IAttributeProto => ({ name, type: AttributeType.INT, i: value });

/** A graph under construction: nodes and initializers, and unique intermediate names. */
class GraphBuilder {
  readonly nodes: INode[] = [];
  readonly initializers: ITensor[] = [];
  private n = 0;

  op(opType: string, inputs: string[], attribute: onnxProto.onnx.IAttributeProto[] = [], output?: string): string {
    const out = output ?? `${opType.toLowerCase()}_${this.n++}`;
    this.nodes.push({ name: `${opType}_${out}`, opType, input: inputs, output: [out], attribute });
    return out;
  }
  float(name: string, dims: number[], data: Float32Array): string {
    this.initializers.push(floatTensor(name, dims, data));
    return name;
  }
  int64(name: string, dims: number[], values: number[]): string {
    this.initializers.push(int64Tensor(name, dims, values));
    return name;
  }
  /** [1, L, D] → [1, 8, L, 32] */
  heads(x: string): string {
    return this.op('Transpose', [this.op('Reshape', [x, 'shape_heads'])], [ints('perm', [0, 2, 1, 3])]);
  }
  /** [1, 8, L, 32] → [1, L, D] */
  merge(x: string): string {
    return this.op('Reshape', [this.op('Transpose', [x], [ints('perm', [0, 2, 1, 3])]), 'shape_model']);
  }
}

function encodeModel(name: string, g: GraphBuilder, inputs: onnxProto.onnx.IValueInfoProto[], outputs: onnxProto.onnx.IValueInfoProto[]): Uint8Array {
  // IR version 8, default-domain opset 17. The copy makes a plain Uint8Array of protobufjs's pooled Buffer.
  return new Uint8Array(
    onnx.ModelProto.encode({
      irVersion: 8,
      producerName: 'lookout-test',
      opsetImport: [{ domain: '', version: 17 }],
      graph: { name, node: g.nodes, initializer: g.initializers, input: inputs, output: outputs },
    }).finish(),
  );
}

// ---------------------------------------------------------------- weights

interface LayerWeights {
  q: Float32Array;
  k: Float32Array;
  v: Float32Array;
  o: Float32Array;
  q2: Float32Array;
  o2: Float32Array;
  w1: Float32Array;
  b1: Float32Array;
  w2: Float32Array;
}

interface DecoderWeights {
  tokens: Float32Array;
  positions: Float32Array;
  layers: LayerWeights[];
  head: Float32Array;
  stopHead: Float32Array;
  headBias: Float32Array;
}

/** The last model dimension carries the stop signal: embeddings leave it 0, every layer neither reads nor writes it. */
const STOP_DIM = TEST_TROCR.D - 1;

function decoderWeights(rnd: () => number, vocab: number, ffn: number, eosAtStep: number | undefined): DecoderWeights {
  const D = TEST_TROCR.D;
  const uniform = (n: number, a: number) => Float32Array.from({ length: n }, () => (rnd() * 2 - 1) * a);
  const scale = Math.sqrt(3 / D);
  /** [rows, cols] row-major (MatMul's B); the stop dimension cut out on the side given. */
  const matrix = (rows: number, cols: number, a: number, cut: 'in' | 'out') => {
    const m = uniform(rows * cols, a);
    if (cut === 'in' && rows === D) m.fill(0, STOP_DIM * cols, (STOP_DIM + 1) * cols);
    if (cut === 'out' && cols === D) for (let r = 0; r < rows; r++) m[r * cols + STOP_DIM] = 0;
    return m;
  };
  const tokens = uniform(vocab * D, 1);
  const posTable = uniform((TEST_TROCR.SELF + 1) * D, 1.5);
  for (let r = 0; r < vocab; r++) tokens[r * D + STOP_DIM] = 0;
  for (let r = 0; r <= TEST_TROCR.SELF; r++) posTable[r * D + STOP_DIM] = r === eosAtStep ? 1 : 0;
  const layers = Array.from({ length: TEST_TROCR.LAYERS }, () => ({
    q: matrix(D, D, scale, 'in'),
    k: matrix(D, D, scale, 'in'),
    v: matrix(D, D, scale, 'in'),
    o: matrix(D, D, scale, 'out'),
    q2: matrix(D, D, scale, 'in'),
    o2: matrix(D, D, scale, 'out'),
    w1: matrix(D, ffn, scale, 'in'),
    b1: uniform(ffn, 0.1),
    w2: matrix(ffn, D, Math.sqrt(3 / ffn), 'out'),
  }));
  const head = uniform(D * vocab, scale * 2);
  head.fill(0, STOP_DIM * vocab, (STOP_DIM + 1) * vocab);
  // Reads the raw stream (not its layer norm), where the stop dimension is exactly what the position put there.
  const stopHead = new Float32Array(vocab);
  stopHead[TEST_TROCR.EOS] = 100;
  const headBias = uniform(vocab, 0.5);
  // Special ids are never read; EOS only where the stop dimension raises it (+100 - 50).
  for (const id of [0, 1, 2, 3]) if (id < vocab) headBias[id] = -50;
  return { tokens, positions: posTable, layers, head, stopHead, headBias };
}

// ---------------------------------------------------------------- graphs

const names = {
  crossKey: (i: number) => `present.${i}.encoder.key`,
  crossValue: (i: number) => `present.${i}.encoder.value`,
  pastCrossKey: (i: number) => `past_key_values.${i}.encoder.key`,
  pastCrossValue: (i: number) => `past_key_values.${i}.encoder.value`,
  pastSelfKey: (i: number) => `past_key_values.${i}.decoder.key`,
  pastSelfValue: (i: number) => `past_key_values.${i}.decoder.value`,
  presentSelfKey: (i: number) => `present.${i}.decoder.key`,
  presentSelfValue: (i: number) => `present.${i}.decoder.value`,
};

function buildEncoder(rnd: () => number, size: number, patchDim: number): Uint8Array {
  const { D, LAYERS, HEADS, HEAD_DIM } = TEST_TROCR;
  const grid = Math.floor(size / 16);
  const positions = grid * grid + 2;
  const uniform = (n: number, a: number) => Float32Array.from({ length: n }, () => (rnd() * 2 - 1) * a);
  const g = new GraphBuilder();
  g.int64('shape_heads', [4], [1, -1, HEADS, HEAD_DIM]);
  g.int64('shape_patches', [3], [1, patchDim, -1]);
  const conv = g.op(
    'Conv',
    [
      'pixel_values',
      g.float('patch_w', [patchDim, 3, 16, 16], uniform(patchDim * 3 * 256, Math.sqrt(3 / 768))),
      g.float('patch_b', [patchDim], uniform(patchDim, 0.1)),
    ],
    [ints('kernel_shape', [16, 16]), ints('strides', [16, 16])],
  );
  const patches = g.op('Transpose', [g.op('Reshape', [conv, 'shape_patches'])], [ints('perm', [0, 2, 1])]);
  const tokens = g.op('Concat', [g.float('cls_tokens', [1, 2, patchDim], uniform(2 * patchDim, 1)), patches], [int('axis', 1)]);
  const hidden = g.op('Add', [tokens, g.float('enc_positions', [1, positions, patchDim], uniform(positions * patchDim, 0.5))]);
  const outputs: onnxProto.onnx.IValueInfoProto[] = [];
  for (let i = 0; i < LAYERS; i++) {
    for (const [kind, out] of [
      ['k', names.crossKey(i)],
      ['v', names.crossValue(i)],
    ] as const) {
      const projected = g.op('MatMul', [hidden, g.float(`cross_${kind}_${i}`, [patchDim, D], uniform(patchDim * D, Math.sqrt(3 / patchDim)))]);
      g.op('Transpose', [g.op('Reshape', [projected, 'shape_heads'])], [ints('perm', [0, 2, 1, 3])], out);
      outputs.push(valueInfo(out, 'float32', [1, HEADS, positions, HEAD_DIM]));
    }
  }
  return encodeModel('trocr_encoder_test', g, [valueInfo('pixel_values', 'float32', [1, 3, size, size])], outputs);
}

/** The layers shared by the step and the full graph; `selfKv` gives each layer's keys and values (cached or not), `mask` is added to the self-attention scores. */
function decoderBody(
  g: GraphBuilder,
  w: DecoderWeights,
  x0: string,
  mask: string,
  selfKv: (i: number, k: string, v: string) => [string, string],
  vocab: number,
  ffn: number,
): string {
  const { D, HEAD_DIM } = TEST_TROCR;
  g.int64('shape_heads', [4], [1, -1, TEST_TROCR.HEADS, HEAD_DIM]);
  g.int64('shape_model', [3], [1, -1, D]);
  g.float('attn_scale', [], Float32Array.of(1 / Math.sqrt(HEAD_DIM)));
  g.float('norm_scale', [D], new Float32Array(D).fill(1));
  // Pre-norm, as transformers that stack six layers without growing need.
  const norm = (v: string) => g.op('LayerNormalization', [v, 'norm_scale'], [int('axis', -1)]);
  let x = x0;
  w.layers.forEach((l, i) => {
    const W = (name: string, rows: number, cols: number, data: Float32Array) => g.float(`${name}_${i}`, [rows, cols], data);
    // self-attention
    const h = norm(x);
    const q = g.heads(g.op('MatMul', [h, W('self_q', D, D, l.q)]));
    const [keys, values] = selfKv(i, g.heads(g.op('MatMul', [h, W('self_k', D, D, l.k)])), g.heads(g.op('MatMul', [h, W('self_v', D, D, l.v)])));
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, g.op('Transpose', [keys], [ints('perm', [0, 1, 3, 2])])]), 'attn_scale']), mask]);
    const attended = g.op('MatMul', [g.op('Softmax', [scores], [int('axis', -1)]), values]);
    x = g.op('Add', [x, g.op('MatMul', [g.merge(attended), W('self_o', D, D, l.o)])]);
    // cross-attention over the encoder's caches, as they are
    const q2 = g.heads(g.op('MatMul', [norm(x), W('cross_q', D, D, l.q2)]));
    const crossScores = g.op('Mul', [g.op('MatMul', [q2, g.op('Transpose', [names.pastCrossKey(i)], [ints('perm', [0, 1, 3, 2])])]), 'attn_scale']);
    const crossAttended = g.op('MatMul', [g.op('Softmax', [crossScores], [int('axis', -1)]), names.pastCrossValue(i)]);
    x = g.op('Add', [x, g.op('MatMul', [g.merge(crossAttended), W('cross_o', D, D, l.o2)])]);
    // MLP
    const hidden = g.op('Relu', [g.op('Add', [g.op('MatMul', [norm(x), W('mlp_w1', D, ffn, l.w1)]), g.float(`mlp_b1_${i}`, [ffn], l.b1)])]);
    x = g.op('Add', [x, g.op('MatMul', [hidden, W('mlp_w2', ffn, D, l.w2)])]);
  });
  const logits = g.op('Add', [g.op('MatMul', [norm(x), g.float('lm_head', [D, vocab], w.head)]), g.float('lm_bias', [vocab], w.headBias)]);
  const stop = g.op('Slice', [x, g.int64('stop_from', [1], [STOP_DIM]), g.int64('stop_to', [1], [STOP_DIM + 1]), g.int64('stop_axis', [1], [-1])]);
  return g.op('Add', [logits, g.op('Mul', [stop, g.float('stop_head', [vocab], w.stopHead)])], [], 'logits');
}

function crossInputs(): onnxProto.onnx.IValueInfoProto[] {
  const { LAYERS, HEADS, CROSS, HEAD_DIM } = TEST_TROCR;
  return Array.from({ length: LAYERS }, (_, i) => [
    valueInfo(names.pastCrossKey(i), 'float32', [1, HEADS, CROSS, HEAD_DIM]),
    valueInfo(names.pastCrossValue(i), 'float32', [1, HEADS, CROSS, HEAD_DIM]),
  ]).flat();
}

function buildStepDecoder(w: DecoderWeights, spec: TrocrModelPair['spec']): Uint8Array {
  const { D, LAYERS, HEADS, HEAD_DIM, SELF } = TEST_TROCR;
  const selfLen = spec.selfCacheLen;
  const g = new GraphBuilder();
  // A table shorter than the steps makes Gather fail at run time when the step reaches its end.
  const rows = spec.crashAtStep ?? SELF + 1;
  const asInt64 = (name: string) => (spec.indexType === 'int64' ? name : g.op('Cast', [name], [int('to', DataType.INT64)]));
  const step = asInt64('cache_position');
  const token = g.op('Gather', [g.float('token_embedding', [spec.vocab, D], w.tokens), asInt64(spec.inputIdsName)]);
  const position = g.op('Gather', [g.float('position_embedding', [rows, D], w.positions.subarray(0, rows * D)), step]);
  const x0 = g.op('Add', [token, position]);
  // Right-aligned window: slot j (of the selfLen cached + the new one) is live when j + step >= selfLen.
  const live = g.op('GreaterOrEqual', [
    g.op('Add', [
      g.int64(
        'slots',
        [selfLen + 1],
        Array.from({ length: selfLen + 1 }, (_, j) => j),
      ),
      step,
    ]),
    g.int64('window', [], [selfLen]),
  ]);
  const mask = g.op('Where', [live, g.float('mask_open', [], Float32Array.of(0)), g.float('mask_closed', [], Float32Array.of(-1e9))]);
  const outputs: onnxProto.onnx.IValueInfoProto[] = [valueInfo('logits', 'float32', [1, 1, spec.vocab])];
  decoderBody(
    g,
    w,
    x0,
    mask,
    (i, k, v) => {
      const keys = g.op('Concat', [names.pastSelfKey(i), k], [int('axis', 2)], names.presentSelfKey(i));
      const values = g.op('Concat', [names.pastSelfValue(i), v], [int('axis', 2)], names.presentSelfValue(i));
      outputs.push(valueInfo(keys, 'float32', [1, HEADS, selfLen + 1, HEAD_DIM]), valueInfo(values, 'float32', [1, HEADS, selfLen + 1, HEAD_DIM]));
      return [keys, values];
    },
    spec.vocab,
    spec.ffn,
  );
  const cross = crossInputs();
  const inputs = [
    valueInfo(spec.inputIdsName, spec.indexType, [1, 1]),
    valueInfo('cache_position', spec.indexType, [1]),
    ...Array.from({ length: LAYERS }, (_, i) => [
      valueInfo(names.pastSelfKey(i), 'float32', [1, HEADS, selfLen, HEAD_DIM]),
      valueInfo(names.pastSelfValue(i), 'float32', [1, HEADS, selfLen, HEAD_DIM]),
      cross[2 * i],
      cross[2 * i + 1],
    ]).flat(),
  ];
  return encodeModel('trocr_decoder_test', g, inputs, outputs);
}

function buildFullDecoder(w: DecoderWeights, spec: TrocrModelPair['spec']): Uint8Array {
  const { D } = TEST_TROCR;
  const g = new GraphBuilder();
  const token = g.op('Gather', [g.float('token_embedding', [spec.vocab, D], w.tokens), 'input_ids']);
  const length = g.op('Squeeze', [g.op('Shape', ['input_ids'], [int('start', 1), int('end', 2)])]);
  const steps = g.op('Range', [g.int64('zero', [], [0]), length, g.int64('one', [], [1])]);
  const x0 = g.op('Add', [token, g.op('Gather', [g.float('position_embedding', [TEST_TROCR.SELF + 1, D], w.positions), steps])]);
  // Causal: query t sees keys 0..t.
  const seen = g.op('GreaterOrEqual', [g.op('Unsqueeze', [steps, g.int64('axis1', [1], [1])]), g.op('Unsqueeze', [steps, g.int64('axis0', [1], [0])])]);
  const mask = g.op('Where', [seen, g.float('mask_open', [], Float32Array.of(0)), g.float('mask_closed', [], Float32Array.of(-1e9))]);
  decoderBody(g, w, x0, mask, (_i, k, v) => [k, v], spec.vocab, spec.ffn);
  return encodeModel(
    'trocr_decoder_full_test',
    g,
    [valueInfo('input_ids', 'int64', [1, 'T']), ...crossInputs()],
    [valueInfo('logits', 'float32', [1, 'T', spec.vocab])],
  );
}

export function buildTrocrPair(input: TrocrModelSpec = {}): TrocrModelPair {
  const spec: TrocrModelPair['spec'] = {
    seed: 11,
    vocab: 64,
    inputSize: 384,
    ffn: 128,
    patchDim: 16,
    inputIdsName: 'input_ids',
    selfCacheLen: TEST_TROCR.SELF,
    indexType: 'int64',
    ...input,
  };
  const rnd = seededRandom(spec.seed);
  const weights = decoderWeights(rnd, spec.vocab, spec.ffn, spec.eosAtStep);
  return {
    spec,
    encoder: buildEncoder(rnd, spec.inputSize, spec.patchDim),
    decoder: buildStepDecoder(weights, spec),
    fullDecoder: buildFullDecoder(weights, spec),
  };
}

/** Writes trocr_encoder.onnx and trocr_decoder.onnx (the spec's ONNX export names) into `dir`. */
export async function writeTrocrPair(dir: string, pair: TrocrModelPair): Promise<{ encoder: string; decoder: string }> {
  await mkdir(dir, { recursive: true });
  const encoder = join(dir, 'trocr_encoder.onnx');
  const decoder = join(dir, 'trocr_decoder.onnx');
  await writeFile(encoder, pair.encoder);
  await writeFile(decoder, pair.decoder);
  return { encoder, decoder };
}
