import { readFile } from 'node:fs/promises';
import { provisionFleetCertificates, type FleetCertificatesReport } from '../../lib/tls/provision-fleet.js';
import type { ProvisionedCertificate } from '../../lib/tls/provision-certificates.js';

export interface TestFleetCerts {
  caDir: string;
  /** `<caDir>/ca.crt` and its PEM. */
  caCertPath: string;
  caCertPem: string;
  /** A device's provisioned files (under its data root: /data/config/shadow_peer.crt|.key, fleet_ca.crt); throws for an id not asked for. */
  device(id: string): ProvisionedCertificate;
  /** The hub's files (`<hub data dir>/tls/hub.crt|hub.key|fleet_ca.crt`); throws when no hub data dir was given. */
  hub(): ProvisionedCertificate;
  report: FleetCertificatesReport;
}

/**
 * One call that provisions a fleet for a test as `lookout certs` would: a fleet CA in `caDir`
 * (created there on first use), each device's certificate under its data root and the hub's client
 * certificate under its data dir. Calling it again with another `caDir` makes a second, foreign CA.
 */
export async function provisionTestFleetCerts(
  caDir: string,
  options: { devices?: { id: string; dataRoot: string; ips?: string[] }[]; hubDataDir?: string } = {},
): Promise<TestFleetCerts> {
  const report = await provisionFleetCertificates({
    caDir,
    devices: (options.devices ?? []).map((d) => ({ deviceId: d.id, dataRoot: d.dataRoot, ips: d.ips ?? [] })),
    ...(options.hubDataDir !== undefined ? { hubDataDir: options.hubDataDir } : {}),
  });
  const find = (role: 'device' | 'hub', name?: string) => {
    const found = report.certificates.find((c) => c.role === role && (name === undefined || c.name === name));
    if (!found) throw new Error(`provisionTestFleetCerts made no ${role} certificate${name ? ` for ${name}` : ''}`);
    return found;
  };
  return {
    caDir,
    caCertPath: report.ca.certPath,
    caCertPem: await readFile(report.ca.certPath, 'utf8'),
    device: (id) => find('device', id),
    hub: () => find('hub'),
    report,
  };
}
