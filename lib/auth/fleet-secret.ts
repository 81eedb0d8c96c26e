import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { LookoutError, writeFileAtomic } from 'lookout/core';

export const FLEET_SECRET_FILE = 'fleet-secret';
const MIN_LENGTH = 16;

export interface FleetSecret {
  secret: string;
  /** Where it came from: given (option or LOOKOUT_FLEET_SECRET), read from the data dir, or created there now. */
  source: 'given' | 'file' | 'created';
  path?: string;
}

/**
 * The fleet secret every per-device credential derives from (bus passwords, tool tokens). Given, or
 * kept in `<data dir>/fleet-secret` (mode 0600), created on the hub's first start so that a
 * newcomer's `npm start` has per-device identity without a setup step.
 */
export async function loadFleetSecret(dataDir: string, given?: string, options: { create?: boolean } = {}): Promise<FleetSecret> {
  if (given !== undefined) {
    if (given.length < MIN_LENGTH)
      throw new LookoutError('config_invalid', `the fleet secret must be at least ${MIN_LENGTH} characters`, { details: { key: 'LOOKOUT_FLEET_SECRET' } });
    return { secret: given, source: 'given' };
  }
  const path = join(dataDir, FLEET_SECRET_FILE);
  try {
    const secret = (await readFile(path, 'utf8')).trim();
    if (secret.length < MIN_LENGTH)
      throw new LookoutError('config_invalid', `${path} holds no usable fleet secret (at least ${MIN_LENGTH} characters)`, { details: { path } });
    if (((await stat(path)).mode & 0o077) !== 0) {
      throw new LookoutError('config_invalid', `${path} is readable by other users: chmod 600 it (every device credential derives from it)`, {
        details: { path },
      });
    }
    return { secret, source: 'file', path };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (options.create === false) {
      throw new LookoutError('config_invalid', `no fleet secret at ${path}: start the hub once (it creates it there), or set LOOKOUT_FLEET_SECRET`, {
        details: { path },
      });
    }
  }
  const secret = randomBytes(32).toString('base64url');
  await writeFileAtomic(path, `${secret}\n`, 0o600);
  return { secret, source: 'created', path };
}
