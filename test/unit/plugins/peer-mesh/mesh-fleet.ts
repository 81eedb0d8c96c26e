import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MeshIdentity } from '../../../../plugins/peer-mesh/src/mesh-identity.js';
import { provisionTestFleetCerts } from '../../../support/fleet-certs.js';

/** Devices of one test fleet (certificates from a fleet CA, as `lookout certs` makes them), and of a foreign one. */
export interface MeshFleet {
  identity(id: string): MeshIdentity;
  /** A device of another fleet CA: its certificate is valid, just not ours. */
  foreign(id: string): MeshIdentity;
  close(): Promise<void>;
}

export async function meshFleet(ids: string[], foreignIds: string[] = []): Promise<MeshFleet> {
  const dir = await mkdtemp(join(tmpdir(), 'mesh-fleet-'));
  const fleet = await provisionTestFleetCerts(join(dir, 'ca'), { devices: ids.map((id) => ({ id, dataRoot: join(dir, id) })) });
  const other = await provisionTestFleetCerts(join(dir, 'other-ca'), { devices: foreignIds.map((id) => ({ id, dataRoot: join(dir, 'foreign', id) })) });
  const load = async (f: typeof fleet, id: string) =>
    new MeshIdentity(id, { cert: await readFile(f.device(id).certPath), key: await readFile(f.device(id).keyPath), ca: Buffer.from(fleet.caCertPem) });
  const mine = new Map(await Promise.all(ids.map(async (id) => [id, await load(fleet, id)] as const)));
  const theirs = new Map(await Promise.all(foreignIds.map(async (id) => [id, await load(other, id)] as const)));
  const get = (m: Map<string, MeshIdentity>, id: string) => {
    const found = m.get(id);
    if (!found) throw new Error(`no test identity ${id}`);
    return found;
  };
  return { identity: (id) => get(mine, id), foreign: (id) => get(theirs, id), close: () => rm(dir, { recursive: true, force: true }) };
}
