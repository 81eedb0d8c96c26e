import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { LookoutError } from 'lookout/core';

/** Where an operator (or a deploy) drops the description of an available runtime update. */
export const UPDATE_MANIFEST_PATH = '/data/config/firmware_update.json';

export const UpdateManifestSchema = z.looseObject({
  version: z.string().regex(/^\d+\.\d+\.\d+(?:[-+].*)?$/, 'a semver version'),
  url: z.string().min(1).optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/i)
    .optional(),
  notes: z.string().optional(),
});

export const UpdateCheckResultSchema = z.object({
  current_version: z.string(),
  available_version: z.string().nullable(),
  update_available: z.boolean(),
  manifest_path: z.string(),
  checked_at: z.string(),
  url: z.string().optional(),
  notes: z.string().optional(),
  reason: z.string().optional(),
});
export type UpdateCheckResult = z.infer<typeof UpdateCheckResultSchema>;

/**
 * Compares the running version with the update manifest, if one is there. No manifest is not an
 * error (nothing offered); an unreadable or invalid one is, naming the file.
 */
export async function checkForUpdate(currentVersion: string, manifestPath: string): Promise<UpdateCheckResult> {
  const base = { current_version: currentVersion, manifest_path: manifestPath, checked_at: new Date().toISOString() };
  let text: string;
  try {
    text = await readFile(manifestPath, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      return { ...base, available_version: null, update_available: false, reason: `no update manifest at ${manifestPath}` };
    }
    throw new LookoutError('config_invalid', `the update manifest ${manifestPath} cannot be read: ${(err as Error).message}`, {
      cause: err,
      details: { path: manifestPath },
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new LookoutError('config_invalid', `the update manifest ${manifestPath} is not JSON: ${(err as Error).message}`, { details: { path: manifestPath } });
  }
  const parsed = UpdateManifestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new LookoutError('config_invalid', `the update manifest ${manifestPath} is invalid: ${z.prettifyError(parsed.error)}`, {
      details: { path: manifestPath, issues: parsed.error.issues },
    });
  }
  const m = parsed.data;
  const newer = compareVersions(m.version, currentVersion) > 0;
  return {
    ...base,
    available_version: m.version,
    update_available: newer,
    ...(m.url ? { url: m.url } : {}),
    ...(m.notes ? { notes: m.notes } : {}),
    ...(newer ? {} : { reason: `${m.version} is not newer than ${currentVersion}` }),
  };
}

/** Semver precedence of `major.minor.patch[-pre]`: a pre-release sorts before its release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core, pre] = v.split('+')[0].split(/-(.*)/s);
    return { nums: core.split('.').map(Number), pre: pre ?? '' };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  if (x.pre === y.pre) return 0;
  if (!x.pre) return 1;
  if (!y.pre) return -1;
  return comparePreRelease(x.pre.split('.'), y.pre.split('.'));
}

/** Semver 11.4: identifier by identifier; numbers numerically and before words; a shorter list first. */
function comparePreRelease(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [p, q] = [a[i], b[i]];
    if (p === q) continue;
    const [pn, qn] = [/^\d+$/.test(p), /^\d+$/.test(q)];
    if (pn && qn) return Math.sign(Number(p) - Number(q));
    if (pn !== qn) return pn ? -1 : 1;
    return p < q ? -1 : 1;
  }
  return Math.sign(a.length - b.length);
}
