import { stat, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DEVICE_PATHS, LookoutError, devicePath } from 'lookout/core';
import type { TrocrConfig } from '../config.js';
import { TROCR } from '../model/trocr-contract.js';

export type TrocrBackend = 'onnx' | 'snpe';

/** The spec's artifact names per back-end (spec 02, "Text-recognition models"). */
export const DEFAULT_FILES: Record<TrocrBackend, { encoder: string; decoder: string }> = {
  onnx: { encoder: `${DEVICE_PATHS.models}/trocr_encoder.onnx`, decoder: `${DEVICE_PATHS.models}/trocr_decoder.onnx` },
  snpe: { encoder: `${DEVICE_PATHS.models}/trocr_encoder_qcs8550.dlc`, decoder: `${DEVICE_PATHS.models}/trocr_decoder_qcs8550.dlc` },
};

export interface ModelFiles {
  backend: TrocrBackend;
  /** Resolved under the data root. */
  encoder: string;
  decoder: string;
}

const isDlc = (path: string | undefined) => path !== undefined && path.toLowerCase().endsWith('.dlc');

/**
 * The back-end and the two files: TROCR_BACKEND, else the files' format (.dlc runs on snpe), else
 * onnx; each file from its key or the back-end's default. A file of the other back-end's format is
 * a configuration error naming the key.
 */
export function resolveModelFiles(config: Pick<TrocrConfig, 'TROCR_BACKEND' | 'TROCR_ENCODER_MODEL' | 'TROCR_DECODER_MODEL'>, dataDir: string): ModelFiles {
  const backend: TrocrBackend = config.TROCR_BACKEND ?? (isDlc(config.TROCR_ENCODER_MODEL) || isDlc(config.TROCR_DECODER_MODEL) ? 'snpe' : 'onnx');
  const files = {
    encoder: config.TROCR_ENCODER_MODEL ?? DEFAULT_FILES[backend].encoder,
    decoder: config.TROCR_DECODER_MODEL ?? DEFAULT_FILES[backend].decoder,
  };
  for (const [part, key] of [
    ['encoder', 'TROCR_ENCODER_MODEL'],
    ['decoder', 'TROCR_DECODER_MODEL'],
  ] as const) {
    if (isDlc(files[part]) !== (backend === 'snpe')) {
      throw new LookoutError(
        'config_invalid',
        `${key}=${files[part]} cannot run on the ${backend} back-end: ${backend === 'snpe' ? 'snpe runs .dlc files' : '.dlc files run on snpe, onnx runs .onnx exports'}`,
        { details: { key, path: files[part], backend } },
      );
    }
  }
  return { backend, encoder: devicePath(dataDir, files.encoder), decoder: devicePath(dataDir, files.decoder) };
}

export interface FileState {
  path: string;
  bytes: number | null;
  /** size, mtime and inode: what changes when push_device_models.sh writes the file again. */
  fingerprint: string;
}

async function fileState(path: string): Promise<FileState> {
  try {
    const s = await stat(path);
    return { path, bytes: s.size, fingerprint: `${s.size}:${s.mtimeMs}:${s.ino}` };
  } catch {
    return { path, bytes: null, fingerprint: 'missing' };
  }
}

export async function modelFileStates(files: ModelFiles): Promise<{ encoder: FileState; decoder: FileState; fingerprint: string }> {
  const [encoder, decoder] = await Promise.all([fileState(files.encoder), fileState(files.decoder)]);
  return { encoder, decoder, fingerprint: `${encoder.fingerprint}|${decoder.fingerprint}` };
}

const MB = 1024 * 1024;

/**
 * Spec 02: about 250 MB or more of storage is needed for both files. What the folder offers is its
 * free space plus what the two files already take there; less is refused, naming the figures.
 */
export async function checkStorage(files: ModelFiles, states: { encoder: FileState; decoder: FileState }): Promise<void> {
  const folder = dirname(files.encoder);
  let available: number;
  try {
    const fs = await statfs(folder);
    available = fs.bavail * fs.bsize;
  } catch (err) {
    throw new LookoutError('trocr.storage_insufficient', `the text models' folder ${folder} cannot be measured: ${(err as Error).message}`, { cause: err });
  }
  const taken = (states.encoder.bytes ?? 0) + (states.decoder.bytes ?? 0);
  if (available + taken < TROCR.MIN_STORAGE_BYTES) {
    const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
    throw new LookoutError(
      'trocr.storage_insufficient',
      `the text models need about ${TROCR.MIN_STORAGE_BYTES / MB} MB for both files; ${folder} has ${mb(available)} free` +
        (taken > 0 ? ` and the files take ${mb(taken)}` : '') +
        ': free space there (or point TROCR_ENCODER_MODEL and TROCR_DECODER_MODEL at a larger volume)',
      { details: { folder, available_bytes: available, files_bytes: taken, needed_bytes: TROCR.MIN_STORAGE_BYTES } },
    );
  }
}

/** Both files present, or the error naming the missing ones and how they get there. */
export function requirePresent(states: { encoder: FileState; decoder: FileState }): void {
  const missing = [states.encoder, states.decoder].filter((s) => s.bytes === null).map((s) => s.path);
  if (missing.length > 0) {
    throw new LookoutError(
      'trocr.model_missing',
      `no text model at ${missing.join(' and ')}: push the encoder and decoder to ${DEVICE_PATHS.models} (push_device_models.sh)`,
      { details: { missing } },
    );
  }
}
