import { findDetrOutputs } from '../model/detr-outputs.js';
import type { DetrOutputs } from './detr-runner.js';
import type { SnpeBinding, SnpeInputLayout, SnpeSession } from './snpe-backend.js';

/** What native/src/snpe/snpe_binding.cc exports as `snpe` (built only against the vendor SDK). */
export interface NativeSnpeModule {
  load(dlc: Uint8Array, runtime: string, performanceProfile: string): Promise<NativeSnpeSession>;
}

export interface NativeSnpeSession {
  /** The DLC's input dimensions as the vendor runtime reports them: [1, 3, H, W] or [1, H, W, 3]. */
  readonly inputDims: readonly number[];
  readonly inputLayout: SnpeInputLayout;
  readonly outputs: readonly { name: string; dims: readonly number[] }[];
  execute(input: Float32Array | Uint8Array): Promise<Record<string, Float32Array>>;
  release(): void;
}

/**
 * The addon's raw SNPE session as the detector's SnpeSession: the input shape in NCHW terms (the
 * production bake's [1, 640, 640, 3] BGR888 input is [1, 3, 640, 640] taken as NHWC bytes, so the
 * package's shape checks apply unchanged) and the boxes and logits found among the outputs as the
 * onnx back-end finds them, by name, else by shape.
 */
export function nativeSnpeBinding(module: NativeSnpeModule): SnpeBinding {
  return {
    async load(dlc, options): Promise<SnpeSession> {
      const raw = await module.load(dlc, options.runtime, options.performanceProfile);
      const d = raw.inputDims;
      const nhwc = raw.inputLayout === 'nhwc_bgr_uint8';
      let names: { boxes: string; logits: string };
      try {
        names = findDetrOutputs(raw.outputs.map((o) => ({ name: o.name, dims: [...o.dims] })));
      } catch (err) {
        raw.release();
        throw err;
      }
      const boxDims = raw.outputs.find((o) => o.name === names.boxes)!.dims;
      const logitDims = raw.outputs.find((o) => o.name === names.logits)!.dims;
      return {
        inputShape: nhwc ? [d[0], d[3], d[1], d[2]] : [...d],
        inputLayout: raw.inputLayout,
        async execute(input): Promise<DetrOutputs> {
          const out = await raw.execute(input);
          return { boxes: out[names.boxes], logits: out[names.logits], queries: boxDims[1], classes: logitDims[2] };
        },
        release: () => raw.release(),
      };
    },
  };
}
