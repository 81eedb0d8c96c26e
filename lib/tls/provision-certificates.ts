import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { chmod } from 'node:fs/promises';
import { LookoutError, writeFileAtomic } from 'lookout/core';
import { looseModeOf, octalMode } from './key-file-mode.js';
import { readIfThere } from './read-if-there.js';
import { checkIssuedBy, commonNameOf, keyMatchesCertificate } from './certificate-check.js';
import type { FleetCa } from './fleet-ca.js';
import { isDnsName } from './certificate-names.js';
import { issueCertificate, type CertificateUsage } from './issue-certificate.js';
import { deviceTlsPaths, HUB_CERT_COMMON_NAME, hubServerTlsPaths, hubTlsPaths, type TlsPaths } from './tls-paths.js';

export const DEVICE_CERT_DAYS = 730;
export const HUB_CERT_DAYS = 730;
export const HUB_SERVER_CERT_DAYS = 730;
/** What the hub's server certificate always names besides the host's: the hub is reached on loopback too. */
export const HUB_SERVER_LOOPBACK_NAMES = { dnsNames: ['localhost'], ips: ['127.0.0.1', '::1'] } as const;
/** A certificate with less than this left is issued again rather than kept. */
export const RENEW_BEFORE_DAYS = 30;

/** What provisioning did for one holder. */
export type CertificateRole = 'device' | 'hub' | 'hub-server';

export interface ProvisionedCertificate extends TlsPaths {
  /** hub: the hub's client certificate (peer queries); hub-server: the one it serves HTTPS with. */
  role: CertificateRole;
  /** The device id, or `lookout-hub`. */
  name: string;
  /** created: there was none; kept: a valid one of this CA was there; replaced: the one there was not fit (see reason). */
  action: 'created' | 'kept' | 'replaced';
  /** Why an existing certificate was replaced (or `forced`). */
  reason?: string;
  /** What was set right on a kept one: its key file's mode, when other users could read it. */
  note?: string;
  fingerprint: string;
  notAfter: string;
  dnsNames: string[];
  ips: string[];
}

interface Wanted {
  role: CertificateRole;
  commonName: string;
  dnsNames: string[];
  ips: string[];
  usages: CertificateUsage[];
  days: number;
}

/**
 * A device certificate (CN = device id, SAN the id as a DNS name and the given addresses, serverAuth
 * and clientAuth: the sidecar serves and dials with it) and the fleet CA beside it.
 */
export function provisionDeviceCertificate(
  ca: FleetCa,
  options: { deviceId: string; dataRoot: string; ips?: string[]; force?: boolean; now?: Date },
): Promise<ProvisionedCertificate> {
  const wanted: Wanted = {
    role: 'device',
    commonName: options.deviceId,
    dnsNames: isDnsName(options.deviceId) ? [options.deviceId] : [],
    ips: unique(options.ips ?? []),
    usages: ['serverAuth', 'clientAuth'],
    days: DEVICE_CERT_DAYS,
  };
  return provision(ca, deviceTlsPaths(options.dataRoot), wanted, options.force ?? false, options.now ?? new Date());
}

/** The hub's client certificate (CN lookout-hub, clientAuth) for its peer queries, and the fleet CA beside it. */
export function provisionHubCertificate(ca: FleetCa, options: { hubDataDir: string; force?: boolean; now?: Date }): Promise<ProvisionedCertificate> {
  const wanted: Wanted = {
    role: 'hub',
    commonName: HUB_CERT_COMMON_NAME,
    dnsNames: [HUB_CERT_COMMON_NAME],
    ips: [],
    usages: ['clientAuth'],
    days: HUB_CERT_DAYS,
  };
  return provision(ca, hubTlsPaths(options.hubDataDir), wanted, options.force ?? false, options.now ?? new Date());
}

/**
 * The hub's server certificate for HTTPS (serverAuth), beside its client one: CN the hub's host name,
 * SAN that name, `localhost`, 127.0.0.1 and ::1, and the names and addresses the operator gives
 * (`--san`: what devices and browsers dial the hub by). A kept certificate lacking one of them is
 * issued again, so adding a name to the command line is how it is added to the certificate.
 */
export function provisionHubServerCertificate(
  ca: FleetCa,
  options: { hubDataDir: string; hostName: string; sans?: string[]; force?: boolean; now?: Date },
): Promise<ProvisionedCertificate> {
  const names = [options.hostName, ...(options.sans ?? [])];
  const ips = names.filter((n) => isIP(n) !== 0);
  const dns = names.filter((n) => isIP(n) === 0);
  // The host's own name is left out of the SAN when it is not a DNS name (the CN still carries it); a given --san is refused.
  const bad = (options.sans ?? []).filter((n) => isIP(n) === 0 && !isDnsName(n));
  if (bad.length > 0) {
    throw new LookoutError('argument_invalid', `--san ${bad[0]} is neither a DNS name nor an IP address`, { details: { san: bad[0] } });
  }
  const wanted: Wanted = {
    role: 'hub-server',
    commonName: options.hostName,
    dnsNames: unique([...dns.filter(isDnsName), ...HUB_SERVER_LOOPBACK_NAMES.dnsNames].map((n) => n.toLowerCase())),
    ips: unique([...ips, ...HUB_SERVER_LOOPBACK_NAMES.ips]),
    usages: ['serverAuth'],
    days: HUB_SERVER_CERT_DAYS,
  };
  return provision(ca, hubServerTlsPaths(options.hubDataDir), wanted, options.force ?? false, options.now ?? new Date());
}

async function provision(ca: FleetCa, paths: TlsPaths, wanted: Wanted, force: boolean, now: Date): Promise<ProvisionedCertificate> {
  const base = { ...paths, role: wanted.role, name: wanted.commonName, dnsNames: wanted.dnsNames, ips: wanted.ips };
  // The CA file first: a holder that finds a certificate also finds the CA it was issued by.
  if ((await readIfThere(paths.caPath)) !== ca.certPem) await writeFileAtomic(paths.caPath, ca.certPem, 0o644);
  const [certPem, keyPem] = await Promise.all([readIfThere(paths.certPath), readIfThere(paths.keyPath)]);
  const unfit = certPem === undefined ? undefined : force ? 'forced' : whyUnfit(ca, certPem, keyPem, wanted, now);
  if (certPem !== undefined && unfit === null) {
    const cert = new X509Certificate(certPem);
    const note = await tightenKeyMode(paths.keyPath);
    return { ...base, action: 'kept', ...(note ? { note } : {}), fingerprint: cert.fingerprint256, notAfter: new Date(cert.validTo).toISOString() };
  }
  const issued = await issueCertificate(ca, { ...wanted, now });
  // The key first: the certificate's presence is what says "provisioned" (as the identity plugin reads it).
  await writeFileAtomic(paths.keyPath, issued.keyPem, 0o600);
  await writeFileAtomic(paths.certPath, issued.certPem, 0o644);
  return {
    ...base,
    action: certPem === undefined ? 'created' : 'replaced',
    ...(unfit ? { reason: unfit } : {}),
    fingerprint: issued.fingerprint,
    notAfter: issued.notAfter.toISOString(),
  };
}

/**
 * A kept key that other users may read is made 0600 (as provisioning writes it) and said so, rather
 * than refused: the certificate and key are fit, the mode comes from a copy or a umask, and fixing it
 * here is what the operator would do by hand. The note asks for --force where it may have been read.
 * A key the operator cannot chmod (another owner) is refused with the reason.
 */
async function tightenKeyMode(keyPath: string): Promise<string | undefined> {
  const loose = await looseModeOf(keyPath);
  if (loose === null) return undefined;
  try {
    await chmod(keyPath, 0o600);
  } catch (err) {
    throw new LookoutError(
      'argument_invalid',
      `${keyPath} is open to other users (mode ${octalMode(loose)}) and cannot be made 0600: ${(err as Error).message}`,
      { details: { path: keyPath } },
    );
  }
  return `its key file was mode ${octalMode(loose)}, open to other users: now 0600 (--force issues a new key if it may have been read)`;
}

/** Why the certificate there cannot be kept, or null when it can. */
function whyUnfit(ca: FleetCa, certPem: string, keyPem: string | undefined, wanted: Wanted, now: Date): string | null {
  const check = checkIssuedBy(certPem, ca.certPem, now);
  if (!check.ok) return check.reason;
  const daysLeft = (check.notAfter.getTime() - now.getTime()) / 86_400_000;
  if (daysLeft < RENEW_BEFORE_DAYS) return `it expires in ${Math.max(0, Math.floor(daysLeft))} days`;
  if (keyPem === undefined) return 'its key file is missing';
  if (!keyMatchesCertificate(certPem, keyPem)) return 'the key file beside it is not its key';
  const cert = new X509Certificate(certPem);
  if (commonNameOf(cert) !== wanted.commonName) return `it names ${JSON.stringify(commonNameOf(cert))}, not ${JSON.stringify(wanted.commonName)}`;
  const san = subjectAltNames(cert);
  const missing = [...wanted.dnsNames.filter((d) => !san.dns.has(d.toLowerCase())), ...wanted.ips.filter((ip) => !san.ip.has(normalIp(ip)))];
  if (missing.length > 0) return `its subjectAltName lacks ${missing.join(', ')}`;
  const eku = new Set(cert.keyUsage ?? []);
  const usageOid = { serverAuth: '1.3.6.1.5.5.7.3.1', clientAuth: '1.3.6.1.5.5.7.3.2' } as const;
  const lacking = wanted.usages.filter((u) => !eku.has(usageOid[u]));
  if (lacking.length > 0) return `its extended key usage lacks ${lacking.join(', ')}`;
  return null;
}

/** DNS names (lower case) and IP addresses (normalIp) of a certificate's subjectAltName. */
function subjectAltNames(cert: X509Certificate): { dns: Set<string>; ip: Set<string> } {
  const dns = new Set<string>();
  const ip = new Set<string>();
  // node writes `DNS:a, IP Address:127.0.0.2`; our names never hold ", " (DNS names and IPs only).
  for (const entry of (cert.subjectAltName ?? '').split(', ')) {
    if (entry.startsWith('DNS:')) dns.add(entry.slice(4).toLowerCase());
    else if (entry.startsWith('IP Address:')) ip.add(normalIp(entry.slice(11)));
  }
  return { dns, ip };
}

/** An address in one spelling (IPv6 compressed, lower case), so that `::1` and node's `0:0:0:0:0:0:0:1` compare equal. */
function normalIp(ip: string): string {
  return ip.includes(':') ? new URL(`http://[${ip}]/`).hostname : ip;
}

const unique = (xs: string[]) => [...new Set(xs)];
