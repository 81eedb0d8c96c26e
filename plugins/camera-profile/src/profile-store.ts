import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LookoutError, writeFileAtomic } from 'lookout/core';
import { CameraProfileSchema, DEFAULT_CAMERA_PROFILE, ProfileFileSchema, type CameraProfile, type ProfileFile } from './profile-schema.js';

/** Reads the profile file; a missing file is the default profile, an invalid one an error naming it. */
export async function readProfileFile(path: string): Promise<ProfileFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new LookoutError('config_invalid', `the camera profile ${path} cannot be read: ${(err as Error).message}`, { cause: err, details: { path } });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new LookoutError('config_invalid', `the camera profile ${path} is not JSON: ${(err as Error).message}`, { details: { path } });
  }
  const parsed = ProfileFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new LookoutError('config_invalid', `the camera profile ${path} is invalid: ${z.prettifyError(parsed.error)}`, { details: { path } });
  return parsed.data;
}

/**
 * Merges an update into the profile and validates the whole before anything is written; the file
 * is replaced atomically, so a refused or interrupted update leaves it as it was.
 */
export function mergeProfile(current: CameraProfile, update: Partial<CameraProfile>): { profile: CameraProfile; changed: string[] } {
  const parsed = CameraProfileSchema.safeParse({ ...current, ...update });
  if (!parsed.success) {
    throw new LookoutError('tool_arguments_invalid', `invalid camera profile: ${z.prettifyError(parsed.error)}`, { details: { issues: parsed.error.issues } });
  }
  const changed = (Object.keys(parsed.data) as (keyof CameraProfile)[]).filter((k) => parsed.data[k] !== current[k]);
  return { profile: parsed.data, changed };
}

export async function writeProfileFile(path: string, profile: CameraProfile): Promise<ProfileFile> {
  const file: ProfileFile = { profile, updated_at: new Date().toISOString() };
  await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  return file;
}

export { DEFAULT_CAMERA_PROFILE };
