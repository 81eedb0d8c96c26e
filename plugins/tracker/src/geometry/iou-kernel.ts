import { nativeAddon, type KernelImplementation, type NativeAddon } from 'lookout/native';
import { iouMatrix, type Box } from './box.js';

/**
 * Below this many pairs the twin is faster than a call into the addon with its boxes packed (bench:
 * 10 x 10 took 0.6 us in TypeScript, 2 us through the addon; 30 x 30 was 1.3x faster native).
 */
export const NATIVE_MIN_PAIRS = 400;

/**
 * The tracker's IoU matrix on the native addon when it loaded (from NATIVE_MIN_PAIRS pairs up), else
 * on the TypeScript twin (iouMatrix); the two agree to the bit, so the choice changes only speed.
 */
export class IouKernel {
  readonly implementation: KernelImplementation;

  constructor(private readonly addon: NativeAddon | null = nativeAddon()) {
    this.implementation = addon ? 'native' : 'typescript';
  }

  /** Row-major |a| x |b| IoU; with class ids for both sides, pairs of different classes are 0. */
  matrix(a: readonly Box[], b: readonly Box[], classA?: readonly number[] | null, classB?: readonly number[] | null): Float64Array {
    const classAware = !!classA && !!classB;
    // Class ids are integers by contract; anything else keeps the twin's exact comparison.
    const small = a.length * b.length < NATIVE_MIN_PAIRS;
    if (!this.addon || small || (classAware && !(classA.every(isInt32) && classB.every(isInt32)))) return iouMatrix(a, b, classA, classB);
    const out = new Float64Array(a.length * b.length);
    if (out.length === 0) return out;
    this.addon.iouMatrix(pack(a), pack(b), classAware ? Int32Array.from(classA) : null, classAware ? Int32Array.from(classB) : null, out);
    return out;
  }
}

function isInt32(v: number): boolean {
  return (v | 0) === v;
}

function pack(boxes: readonly Box[]): Float64Array {
  const flat = new Float64Array(boxes.length * 4);
  for (let i = 0; i < boxes.length; i++) {
    const b = boxes[i];
    flat[i * 4] = b[0];
    flat[i * 4 + 1] = b[1];
    flat[i * 4 + 2] = b[2];
    flat[i * 4 + 3] = b[3];
  }
  return flat;
}

let processKernel: IouKernel | undefined;

/** The process's kernel (the addon as loaded for this process, or the twin). */
export function defaultIouKernel(): IouKernel {
  processKernel ??= new IouKernel();
  return processKernel;
}
