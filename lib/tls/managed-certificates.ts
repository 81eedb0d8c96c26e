import { join, resolve } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from 'lookout/core';
import { CA_FILES } from './fleet-ca.js';
import { readIfThere } from './read-if-there.js';
import type { ProvisionedCertificate } from './provision-certificates.js';

/** The list of what `lookout certs` issued from a CA, kept beside it: `<ca dir>/managed.json`. */
export const MANAGED_FILE = 'managed.json';

const ManagedSchema = z.object({
  certificates: z.array(z.object({ role: z.enum(['device', 'hub', 'hub-server']), name: z.string(), certPath: z.string(), keyPath: z.string() })),
});
export type ManagedCertificate = z.infer<typeof ManagedSchema>['certificates'][number];

/**
 * The certificates issued from the CA in `caDir` (by path: a certificate issued again at the same
 * path is one entry). A missing or unreadable list is empty: it is a record for `lookout certs
 * status`, not the source of any certificate's trust.
 */
export async function readManaged(caDir: string): Promise<ManagedCertificate[]> {
  const text = await readIfThere(join(resolve(caDir), MANAGED_FILE));
  if (text === undefined) return [];
  try {
    return ManagedSchema.parse(JSON.parse(text)).certificates;
  } catch {
    return [];
  }
}

/** Adds (or updates, by certificate path) what a provisioning run issued or kept. */
export async function recordManaged(caDir: string, provisioned: ProvisionedCertificate[]): Promise<void> {
  if (provisioned.length === 0) return;
  const byPath = new Map((await readManaged(caDir)).map((c) => [c.certPath, c]));
  for (const p of provisioned) byPath.set(p.certPath, { role: p.role, name: p.name, certPath: p.certPath, keyPath: p.keyPath });
  const certificates = [...byPath.values()];
  await writeFileAtomic(join(resolve(caDir), MANAGED_FILE), `${JSON.stringify({ certificates }, null, 2)}\n`, 0o644);
}

/** The CA certificate's own path in `caDir`. */
export const caCertPathOf = (caDir: string) => join(resolve(caDir), CA_FILES.cert);
