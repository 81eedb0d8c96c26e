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

/**
 * Persists a profile. A write that fails (ENOSPC on a full disk, a read-only filesystem) is a
 * `tool_failed` naming the file and the cause, and the file keeps its previous content: the caller
 * keeps its current profile, so what runs is always what a restart would load.
 */
export async function writeProfileFile(path: string, profile: CameraProfile): Promise<ProfileFile> {
  const file: ProfileFile = { profile, updated_at: new Date().toISOString() };
  try {
    await writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`);
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code;
    throw new LookoutError('tool_failed', `the camera profile cannot be saved to ${path}: ${(err as Error).message}; the profile is unchanged`, {
      cause: err,
      details: { path, ...(errno ? { errno } : {}) },
    });
  }
  return file;
}

export { DEFAULT_CAMERA_PROFILE };
