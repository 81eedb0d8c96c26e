import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ScratchDir {
  dir: string;
  /** Removes the directory and everything in it; a plain function, so it can be destructured. */
  cleanup: () => Promise<void>;
}

/** A fresh directory under the system temp dir, named `<prefix>XXXXXX`, for one test to write in. */
export async function scratchDir(prefix = 'lookout-test-'): Promise<ScratchDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}
