import { devicePath } from 'lookout/core';
import type { DetectorConfig } from '../config.js';
import { modelPathFromEnv } from '../model/read-package.js';
import type { DetectorBackend } from './backend.js';
import { chooseBackend } from './choose-backend.js';
import { createBackend } from './create-backend.js';

/**
 * The back-end the config asks for. Without RF_DETR_BACKEND, chooseBackend picks: the one a package's
 * config.json names, the one that runs a bare model file's format, the one without a model when no
 * model is given (`--source sim` development). Model paths are device paths, resolved under the data
 * root.
 */
export async function openBackend(config: DetectorConfig, dataDir: string): Promise<{ backend: DetectorBackend; modelPath: string | null }> {
  const named = modelPathFromEnv({ RF_DETR_MODEL_PATH: config.RF_DETR_MODEL_PATH, RF_DETR_EDGE4_MODEL: config.RF_DETR_EDGE4_MODEL });
  const modelPath = named ? devicePath(dataDir, named) : null;
  const { name, modelPackage } = await chooseBackend(config.RF_DETR_BACKEND, modelPath);
  const backend = await createBackend(name, {
    modelPath,
    modelPackage,
    ...(config.RF_DETR_INPUT_SIZE ? { inputSize: config.RF_DETR_INPUT_SIZE } : {}),
    topK: config.RF_DETR_TOP_K,
    scoreThreshold: config.RF_DETR_SCORE_THRESHOLD,
    threads: 1,
    sim: {
      seed: config.SIM_DET_SEED,
      boxJitterPx: config.SIM_DET_JITTER_PX,
      missProbability: config.SIM_DET_MISS_RATE,
      falsePositiveRate: config.SIM_DET_FP_RATE,
      confidenceSpread: config.SIM_DET_CONFIDENCE_SPREAD,
      classMap: config.SIM_DET_CLASS_MAP,
      ...(config.SIM_DET_PERSON_CONFIDENCE === undefined ? {} : { confidenceByClass: { '0': config.SIM_DET_PERSON_CONFIDENCE } }),
    },
  });
  return { backend, modelPath };
}
