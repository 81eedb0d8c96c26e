import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { LookoutError, type Detection } from 'lookout/core';
import type { Frame } from '../../../camera/src/service.js';
import type { PackageConfig } from '../model/package-schema.js';
import { prepareModel } from '../model/prepare-model.js';
import type { ModelPackage } from '../model/read-package.js';
import { checkInputShapes, resolveTargetShape, type InputShape } from '../model/shape-check.js';
import type { BackendStatus, DetectorBackend } from './backend.js';
import { localAlternatives } from './backend-records.js';
import { DetrRunner, type DetrOutputs } from './detr-runner.js';
import { snpeRecord } from './records/snpe.js';

export type SnpeRuntime = PackageConfig['backend_properties']['runtime'];
export type SnpePerformanceProfile = PackageConfig['backend_properties']['performance_profile'];

export interface SnpeLoadOptions {
  runtime: SnpeRuntime;
  performanceProfile: SnpePerformanceProfile;
}

/** One loaded DLC on the chip. */
export interface SnpeSession {
  /** The DLC's input dimensions as the vendor runtime reports them. */
  readonly inputShape: readonly number[];
  /** One inference: boxes [Q*4] (cx, cy, w, h, 0..1) and logits [Q*C]. */
  execute(input: Float32Array): Promise<DetrOutputs>;
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
  /** The native addon (default LOOKOUT_NATIVE_ADDON, else native/build/Release/lookout_native.node under the working directory). */
  addonPath?: string;
  /** A binding to use instead of the addon's: only test doubles of the DSP, which is not reachable here. */
  binding?: SnpeBinding;
  env?: Record<string, string | undefined>;
  /** The package at modelPath, when choosing the back-end already read it. */
  modelPackage?: ModelPackage | null;
}

export const DEFAULT_NATIVE_ADDON = 'native/build/Release/lookout_native.node';
/** A bare production .dlc has no config.json: it runs as the production bake does. */
const BARE_DLC_PROPERTIES: SnpeLoadOptions = { runtime: 'dsp', performanceProfile: 'high_performance' };

/**
 * Finds the vendor runtime through the native addon, or says precisely what is missing. The addon
 * exports `snpe` only when it was compiled against the vendor SDK (SNPE_ROOT), so both are named.
 */
export function loadSnpeBinding(addonPath: string | undefined, env: Record<string, string | undefined>): SnpeBinding {
  const path = resolve(addonPath ?? env.LOOKOUT_NATIVE_ADDON ?? DEFAULT_NATIVE_ADDON);
  const sdk = env.SNPE_ROOT ? `SNPE_ROOT=${env.SNPE_ROOT}` : 'SNPE_ROOT is not set';
  const advice = `use ${localAlternatives()}`;
  const unavailable = `the ${snpeRecord.name} back-end is not available here`;
  if (!existsSync(path)) {
    throw new LookoutError(
      'backend_unavailable',
      `${unavailable}: the native addon ${path} is not built and the vendor SNPE SDK ` + `(libSNPE.so, ${sdk}) is absent; ${advice}`,
    );
  }
  let addon: { snpe?: SnpeBinding };
  try {
    addon = createRequire(import.meta.url)(path) as { snpe?: SnpeBinding };
  } catch (err) {
    throw new LookoutError('backend_unavailable', `${unavailable}: the native addon ${path} does not load (${(err as Error).message}); ${advice}`, {
      cause: err,
    });
  }
  if (!addon.snpe || typeof addon.snpe.load !== 'function') {
    throw new LookoutError('backend_unavailable', `${unavailable}: the native addon ${path} was built without the vendor SNPE SDK (${sdk}); ${advice}`);
  }
  return addon.snpe;
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
    const runner = new DetrRunner(snpeRecord.name, prepared, target, { topK: options.topK, scoreThreshold: options.scoreThreshold });
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
