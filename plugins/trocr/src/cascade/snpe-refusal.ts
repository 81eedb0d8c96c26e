import { LookoutError } from 'lookout/core';
import { nativeAddon, nativeStatus } from 'lookout/native';
import type { ModelFiles } from './model-files.js';

/**
 * TROCR_BACKEND=snpe runs the .dlc pair on the DSP through the vendor runtime. This build has no way
 * to: the error says precisely what is missing and what runs instead (fail closed, never a fallback
 * that pretends to be the device's runtime).
 */
export function snpeRefusal(files: ModelFiles, env: Record<string, string | undefined> = process.env): LookoutError {
  const addon = nativeAddon();
  const sdk = env.SNPE_ROOT ? `SNPE_ROOT=${env.SNPE_ROOT}` : 'SNPE_ROOT is not set';
  const why = !addon
    ? `the native addon is not loaded (${nativeStatus().reason ?? 'unknown reason'}) and the vendor SNPE SDK (libSNPE.so, ${sdk}) is absent`
    : addon.snpe === undefined
      ? `the native addon was built without the vendor SNPE SDK (${sdk})`
      : 'the native SNPE binding runs single-input graphs (the detector’s); the decoder step’s 26 inputs and 13 outputs need a binding of their own';
  return new LookoutError(
    'backend_unavailable',
    `TROCR_BACKEND=snpe cannot run ${files.encoder} and ${files.decoder} on the DSP here: ${why}. ` +
      'On this machine use TROCR_BACKEND=onnx with trocr_encoder.onnx and trocr_decoder.onnx (CPU)',
    { details: { backend: 'snpe', encoder: files.encoder, decoder: files.decoder } },
  );
}
