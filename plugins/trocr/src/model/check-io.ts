import { TROCR, type TensorSpec } from './trocr-contract.js';

/** What onnxruntime says of one input or output (InferenceSession.inputMetadata / outputMetadata). */
export interface ValueMetadata {
  name: string;
  isTensor: boolean;
  type?: string;
  /** Numbers, or strings for symbolic dimensions. */
  shape?: readonly (number | string)[];
}

export interface GraphIo {
  inputs: readonly ValueMetadata[];
  outputs: readonly ValueMetadata[];
}

const show = (shape: readonly (number | string)[]) => `[${shape.join(', ')}]`;

/**
 * Every way a graph's declared inputs and outputs differ from the contract, one sentence each,
 * naming the tensor: a missing or unexpected input, a missing output, another element type or
 * shape. A symbolic dimension passes (the host feeds the contract's size); `vocab` is any size
 * above the special ids. Outputs the contract does not read are allowed. Empty: the graph fits.
 */
export function ioMismatches(graph: string, actual: GraphIo, expected: { inputs: readonly TensorSpec[]; outputs: readonly TensorSpec[] }): string[] {
  const out: string[] = [];
  const compare = (kind: 'input' | 'output', spec: TensorSpec, meta: ValueMetadata | undefined) => {
    if (!meta) {
      out.push(`${graph} has no ${kind} ${spec.name}`);
      return;
    }
    if (!meta.isTensor || !meta.type || !spec.types.includes(meta.type as TensorSpec['types'][number])) {
      out.push(`${graph} ${kind} ${spec.name} is ${meta.isTensor ? (meta.type ?? 'untyped') : 'not a tensor'}, expected ${spec.types.join(' or ')}`);
    }
    const shape = meta.shape ?? [];
    const fits =
      shape.length === spec.shape.length &&
      spec.shape.every((want, d) => {
        const got = shape[d];
        if (typeof got === 'string') return true;
        return want === 'vocab' ? got > Math.max(TROCR.START, TROCR.EOS, TROCR.PAD) : got === want;
      });
    if (!fits) {
      const note = spec.name === 'pixel_values' && shape.includes(320) ? ' (320 is wrong: the crop is 384 × 384)' : '';
      out.push(`${graph} ${kind} ${spec.name} is ${show(shape)}, the spec's is ${show(spec.shape)}${note}`);
    }
  };
  const inputs = new Map(actual.inputs.map((m) => [m.name, m]));
  const outputs = new Map(actual.outputs.map((m) => [m.name, m]));
  for (const spec of expected.inputs) compare('input', spec, inputs.get(spec.name));
  for (const spec of expected.outputs) compare('output', spec, outputs.get(spec.name));
  const known = new Set(expected.inputs.map((s) => s.name));
  // An input the host does not feed makes every run fail: refuse it now.
  for (const m of actual.inputs) if (!known.has(m.name)) out.push(`${graph} takes an input the contract does not feed: ${m.name}`);
  return out;
}
