import { hostname } from 'node:os';
import { openFleetCa } from './fleet-ca.js';
import { recordManaged } from './managed-certificates.js';
import { provisionDeviceCertificate, provisionHubCertificate, provisionHubServerCertificate, type ProvisionedCertificate } from './provision-certificates.js';

export interface FleetCertificatesRequest {
  /** The CA's folder (`ca.crt`, `ca.key`): created on first use. */
  caDir: string;
  devices?: { deviceId: string; dataRoot: string; ips?: string[] }[];
  /** The hub's data dir: its client certificate and its HTTPS server certificate go to `<dir>/tls/`. */
  hubDataDir?: string;
  /** The hub's host name: its server certificate's CN and first SAN (default this machine's host name). */
  hubHostName?: string;
  /** More names and addresses the hub is reached by (its server certificate's SAN). */
  hubSans?: string[];
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
 * first use), then each device's certificate and the hub's two (client and HTTPS server), each kept
 * when still fit (renewed within RENEW_BEFORE_DAYS of its end).
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
  if (request.hubDataDir !== undefined) {
    const force = request.force ?? false;
    certificates.push(await provisionHubCertificate(ca, { hubDataDir: request.hubDataDir, force, now }));
    certificates.push(
      await provisionHubServerCertificate(ca, {
        hubDataDir: request.hubDataDir,
        hostName: request.hubHostName ?? hostname(),
        sans: request.hubSans ?? [],
        force,
        now,
      }),
    );
  }
  // Remembered beside the CA, so that `lookout certs status` shows every certificate it issued.
  await recordManaged(request.caDir, certificates);
  return { ca: { certPath: ca.certPath, keyPath: ca.keyPath, fingerprint: ca.fingerprint, created }, certificates };
}
