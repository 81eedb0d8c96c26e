import { stat } from 'node:fs/promises';

/** Permission bits of a key file that let other users in (group or others: read, write or execute). */
const OPEN_TO_OTHERS = 0o077;

/** The file's permission bits when group or others have any, or null when it is owner-only (0600, 0400). */
export async function looseModeOf(path: string): Promise<number | null> {
  const mode = (await stat(path)).mode & 0o777;
  return (mode & OPEN_TO_OTHERS) !== 0 ? mode : null;
}

/** A mode as `ls` and chmod spell it: 0644. */
export function octalMode(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
