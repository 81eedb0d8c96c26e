import { mkdir, open, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Creates `path` with `data` only if nothing is there (O_EXCL): of several writers racing for the
 * same path exactly one gets true, the others false, and none overwrites another's file. The data is
 * fsynced, then the folder. A write that fails removes the file it created. Readers may see the file
 * before its content is complete: the caller orders its writes so that a later file says "done".
 */
export async function writeFileExclusive(path: string, data: string, mode: number): Promise<boolean> {
  await mkdir(dirname(path), { recursive: true });
  let fh;
  try {
    fh = await open(path, 'wx', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    await fh.writeFile(data);
    await fh.sync();
    await fh.close();
  } catch (err) {
    await fh.close().catch(() => undefined);
    // Ours alone (created exclusively just now): a half-written key must not be left to be loaded.
    await rm(path, { force: true }).catch(() => undefined);
    throw err;
  }
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return true;
}
