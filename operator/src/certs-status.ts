import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LookoutError } from 'lookout/core';
import { caCertPathOf, certificateExpiry, readManaged, type CertificateExpiry } from 'lookout/lib/tls';

export interface CertsStatus {
  caDir: string;
  certificates: (CertificateExpiry & { role: 'ca' | 'device' | 'hub' | 'hub-server' })[];
}

const STATUS_USAGE = 'lookout certs status --ca-dir <dir> [--json]';

export function parseCertsStatusArgs(args: string[]): { caDir: string; json: boolean } {
  let values: { 'ca-dir'?: string; json?: boolean };
  try {
    ({ values } = parseArgs({ args, options: { 'ca-dir': { type: 'string' }, json: { type: 'boolean', default: false } } }));
  } catch (err) {
    throw new LookoutError('config_invalid', `${(err as Error).message}\nusage: ${STATUS_USAGE}`, { details: { usage: true } });
  }
  if (!values['ca-dir']) {
    throw new LookoutError('config_invalid', `certs status needs --ca-dir, the folder of the fleet CA\nusage: ${STATUS_USAGE}`, { details: { usage: true } });
  }
  return { caDir: resolve(values['ca-dir']), json: values.json === true };
}

/** The fleet CA and every certificate `lookout certs` issued from it (its managed.json), each with its days left. */
export async function certsStatus(caDir: string, now = new Date()): Promise<CertsStatus> {
  const managed = await readManaged(caDir);
  return {
    caDir,
    certificates: [
      { role: 'ca' as const, ...certificateExpiry('fleet CA', caCertPathOf(caDir), now) },
      ...managed.map((m) => ({ role: m.role, ...certificateExpiry(m.name, m.certPath, now) })),
    ],
  };
}

export function certsStatusTable(status: CertsStatus): string {
  const rows = status.certificates.map((c) => {
    const left = c.daysLeft === null ? '-' : `${c.daysLeft} days`;
    const flag = c.state === 'ok' ? '' : `  ${c.state.toUpperCase()}${c.problem ? `: ${c.problem}` : ''}`;
    return `${c.role.padEnd(10)} ${c.name.padEnd(16)} ${(c.notAfter?.slice(0, 10) ?? '-').padEnd(10)}  ${left.padStart(9)}  ${c.path}${flag}`;
  });
  return [`${'role'.padEnd(10)} ${'name'.padEnd(16)} ${'until'.padEnd(10)}  ${'left'.padStart(9)}  file`, ...rows].join('\n');
}

/** 0 when every certificate has 30 days or more; 3 (as `lookout readiness` for degraded) when one needs renewing or is missing. */
export function certsStatusExitCode(status: CertsStatus): number {
  return status.certificates.every((c) => c.state === 'ok') ? 0 : 3;
}
