import { LookoutError } from 'lookout/core';
import { type Detection } from 'lookout/core/contracts';
import { loadNativeAddon } from 'lookout/native';
import type { Frame } from '../../../camera/src/service.js';
import type { PackageConfig } from '../model/package-schema.js';
import { prepareModel } from '../model/prepare-model.js';
import type { ModelPackage } from '../model/read-package.js';
import { checkInputShapes, resolveTargetShape, type InputShape } from '../model/shape-check.js';
import type { BackendStatus, DetectorBackend } from './backend.js';
import { localAlternatives } from './backend-records.js';
import { DetrRunner, type DetrOutputs } from './detr-runner.js';
import { snpeRecord } from './records/snpe.js';
import { nativeSnpeBinding, type NativeSnpeModule } from './snpe-native.js';

export type SnpeRuntime = PackageConfig['backend_properties']['runtime'];
export type SnpePerformanceProfile = PackageConfig['backend_properties']['performance_profile'];

export interface SnpeLoadOptions {
  runtime: SnpeRuntime;
  performanceProfile: SnpePerformanceProfile;
}

/** How a DLC takes its input: normalized float32 NCHW (the compiled packages) or the production bake's BGR888 bytes, NHWC. */
export type SnpeInputLayout = 'nchw_float32' | 'nhwc_bgr_uint8';

/** One loaded DLC on the chip. */
export interface SnpeSession {
  /** The DLC's input dimensions in NCHW terms, [1, 3, H, W], whatever its layout. */
  readonly inputShape: readonly number[];
  /** Default nchw_float32. */
  readonly inputLayout?: SnpeInputLayout;
  /** One inference on the input in the session's layout: boxes [Q*4] (cx, cy, w, h, 0..1) and logits [Q*C]. */
  execute(input: Float32Array | Uint8Array): Promise<DetrOutputs>;
  release(): void;
}

/** What the native addon exposes as `snpe` when it was built against the vendor SDK. */
export interface SnpeBinding {
  load(dlc: Uint8Array, options: SnpeLoadOptions): Promise<SnpeSession>;
}

export interface SnpeBackendOptions {
  modelPath: string;
  inputSize?: number;
  topK?: number;
  scoreThreshold?: number;
  /** The native addon file (default: LOOKOUT_NATIVE_ADDON, else the prebuilt or built addon under native/). */
  addonPath?: string;
  /** A binding to use instead of the addon's: only test doubles of the DSP, which is not reachable here. */
  binding?: SnpeBinding;
  env?: Record<string, string | undefined>;
  /** The package at modelPath, when choosing the back-end already read it. */
  modelPackage?: ModelPackage | null;
}

/** A bare production .dlc has no config.json: it runs as the production bake does. */
const BARE_DLC_PROPERTIES: SnpeLoadOptions = { runtime: 'dsp', performanceProfile: 'high_performance' };

/**
 * Finds the vendor runtime through the native addon, or says precisely what is missing. The addon
 * exports `snpe` only when it was compiled against the vendor SDK (SNPE_ROOT or QNN_SDK_ROOT when
 * npm install built it), so both are named.
 */
export function loadSnpeBinding(addonPath: string | undefined, env: Record<string, string | undefined>): SnpeBinding {
  const root = env.SNPE_ROOT ?? env.QNN_SDK_ROOT;
  const sdk = root ? `SNPE_ROOT=${root}` : 'SNPE_ROOT is not set';
  const advice = `use ${localAlternatives()}`;
  const unavailable = `the ${snpeRecord.name} back-end is not available here`;
  // The back-end needs the addon even where LOOKOUT_NATIVE=0 runs the frame kernels in TypeScript.
  const { addon, status } = loadNativeAddon({ LOOKOUT_NATIVE_ADDON: addonPath ?? env.LOOKOUT_NATIVE_ADDON });
  if (!addon) {
    throw new LookoutError('backend_unavailable', `${unavailable}: ${status.reason} and the vendor SNPE SDK (libSNPE.so, ${sdk}) is absent; ${advice}`);
  }
  const snpe = addon.snpe as NativeSnpeModule | undefined;
  if (!snpe || typeof snpe.load !== 'function') {
    throw new LookoutError('backend_unavailable', `${unavailable}: the native addon ${status.path} was built without the vendor SNPE SDK (${sdk}); ${advice}`);
  }
  return nativeSnpeBinding(snpe);
}

/**
 * RF_DETR_BACKEND=snpe: the DLC on the DSP through the native addon. The package is validated first
 * (format, classes, declared vs preprocessing shape) so a bad package is reported as such even on a
 * machine with no vendor runtime; only then is the runtime looked for.
 */
export class SnpeBackend implements DetectorBackend {
  readonly name = snpeRecord.name;

  private constructor(
    private readonly runner: DetrRunner,
    private readonly session: SnpeSession,
    readonly loadOptions: SnpeLoadOptions,
  ) {}

  static async create(options: SnpeBackendOptions): Promise<SnpeBackend> {
    const env = options.env ?? process.env;
    const prepared = await prepareModel(options.modelPath, snpeRecord.name, options.modelPackage);
    const { pkg, declaredShape } = prepared;
    // The DLC's own shape is readable only through the vendor runtime; check what can be checked now.
    const configured = resolveTargetShape(options.inputSize, declaredShape, null);
    checkInputShapes({ declared: declaredShape, model: null, target: configured, modelName: pkg.modelName });
    const props = pkg.config?.backend_properties;
    const loadOptions: SnpeLoadOptions = props ? { runtime: props.runtime, performanceProfile: props.performance_profile } : BARE_DLC_PROPERTIES;

    const binding = options.binding ?? loadSnpeBinding(options.addonPath, env);
    let session: SnpeSession;
    try {
      session = await binding.load(await pkg.readModel(), loadOptions);
    } catch (err) {
      throw new LookoutError('model_package_invalid', `${pkg.path}: the vendor runtime cannot load ${pkg.modelName}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    let target: InputShape;
    try {
      // Without RF_DETR_INPUT_SIZE or labels.json (a package as spec 02 ships it: .dlc and config.json),
      // the DLC's own input size is the preprocessing target, as the onnx back-end takes the export's.
      target = resolveTargetShape(options.inputSize, declaredShape, session.inputShape);
      checkInputShapes({ declared: declaredShape, model: session.inputShape, target, modelName: pkg.modelName });
    } catch (err) {
      session.release();
      throw err;
    }
    const runner = new DetrRunner(snpeRecord.name, prepared, target, {
      topK: options.topK,
      scoreThreshold: options.scoreThreshold,
      inputLayout: session.inputLayout ?? 'nchw_float32',
    });
    return new SnpeBackend(runner, session, loadOptions);
  }

  status(): BackendStatus {
    return this.runner.status();
  }

  detect(frame: Frame): Promise<Detection[]> {
    return this.runner.detect(frame, (input) => this.session.execute(input));
  }

  close(): Promise<void> {
    return this.runner.close(() => this.session.release());
  }
}
