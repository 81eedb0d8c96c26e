import { certificateExpiry, expiryWarning, hubServerTlsPaths, hubTlsPaths, type CertificateExpiry } from 'lookout/lib/tls';

/**
 * The hub's own certificates as readiness shows them: the one it serves HTTPS with (the fleet-CA
 * server certificate of its data dir, or the one given with --tls-cert), its client certificate for
 * peer queries and the fleet CA it pins, each with its days left; and a warning for each that ends
 * within EXPIRY_WARNING_DAYS (30), has ended or cannot be read. A file that is not there is left
 * out: a hub on loopback without peer queries needs none. Read on every answer: three small files.
 */
export function hubCertificates(dataDir: string, servedCertPath: string | undefined, now: Date): { certificates: CertificateExpiry[]; warnings: string[] } {
  const server = hubServerTlsPaths(dataDir);
  const client = hubTlsPaths(dataDir);
  const entries: [string, string][] = [
    ['hub HTTPS server', servedCertPath ?? server.certPath],
    ['hub client', client.certPath],
    ['fleet CA', client.caPath],
  ];
  // The served file is shown once, even when it is the data dir's.
  if (servedCertPath !== undefined && servedCertPath !== server.certPath) entries.splice(1, 0, ['hub HTTPS server (data dir)', server.certPath]);
  const certificates = entries.map(([name, path]) => certificateExpiry(name, path, now)).filter((c) => c.state !== 'missing' || c.path === servedCertPath);
  const warnings = certificates.map(expiryWarning).filter((w): w is string => w !== null);
  return { certificates, warnings };
}
