import { openFleetCa } from './fleet-ca.js';
import { provisionDeviceCertificate, provisionHubCertificate, type ProvisionedCertificate } from './provision-certificates.js';

export interface FleetCertificatesRequest {
  /** The CA's folder (`ca.crt`, `ca.key`): created on first use. */
  caDir: string;
  devices?: { deviceId: string; dataRoot: string; ips?: string[] }[];
  /** The hub's data dir: its client certificate goes to `<dir>/tls/`. */
  hubDataDir?: string;
  /** Issue again even where a valid certificate of this CA is there. The CA itself is never replaced. */
  force?: boolean;
  now?: Date;
}

export interface FleetCertificatesReport {
  ca: { certPath: string; keyPath: string; fingerprint: string; created: boolean };
  certificates: ProvisionedCertificate[];
}

/**
 * What `lookout certs` does, for tests and `npm start` to call directly: the fleet CA (created on
 * first use), then each device's certificate and the hub's, each kept when still fit.
 */
export async function provisionFleetCertificates(request: FleetCertificatesRequest): Promise<FleetCertificatesReport> {
  const now = request.now ?? new Date();
  const { ca, created } = await openFleetCa(request.caDir, { now });
  const certificates: ProvisionedCertificate[] = [];
  for (const d of request.devices ?? []) {
    certificates.push(
      await provisionDeviceCertificate(ca, { deviceId: d.deviceId, dataRoot: d.dataRoot, ips: d.ips ?? [], force: request.force ?? false, now }),
    );
  }
  if (request.hubDataDir !== undefined)
    certificates.push(await provisionHubCertificate(ca, { hubDataDir: request.hubDataDir, force: request.force ?? false, now }));
  return { ca: { certPath: ca.certPath, keyPath: ca.keyPath, fingerprint: ca.fingerprint, created }, certificates };
}
