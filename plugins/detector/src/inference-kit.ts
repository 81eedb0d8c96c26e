import { createCpuSession } from './backends/cpu-session.js';
import { Preprocessor } from './model/preprocess.js';
import type { InferenceKit } from './service.js';

/** What the detector provides as InferenceKitToken: the same session options and preprocessing it uses itself. */
export const inferenceKit: InferenceKit = {
  createCpuSession,
  createPreprocessor: (sizes) => new Preprocessor(sizes),
};
