import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { DEVICE_PATHS } from 'lookout/core';
import { checkIssuedBy, commonNameOf, issueCertificate, keyMatchesCertificate, RENEW_BEFORE_DAYS, type FleetCa } from 'lookout/lib/tls';
import { PUBLIC_MODE, SECRET_MODE } from './device-files.js';
import type { RemoteDevice } from './remote-device.js';

/** As `lookout certs` issues a device certificate. */
const DEVICE_CERT_DAYS = 730;
const DAY_MS = 86_400_000;

export interface StepOutcome {
  status: 'done' | 'unchanged' | 'skipped';
  detail: string;
}

/** Why the certificate on the device will not do (null: it will), checked as `lookout certs` checks before it keeps one. */
function unfitReason(certPem: string, keyPem: string, ca: FleetCa, deviceId: string, now: Date): string | null {
  const issued = checkIssuedBy(certPem, ca.certPem, now);
  if (!issued.ok) return issued.reason;
  if (commonNameOf(new X509Certificate(certPem)) !== deviceId) return `it names another device (not CN=${deviceId})`;
  if (!keyMatchesCertificate(certPem, keyPem)) return 'its key file is not its key';
  if (issued.notAfter.getTime() - now.getTime() < RENEW_BEFORE_DAYS * DAY_MS) return `it ends within ${RENEW_BEFORE_DAYS} days`;
  return null;
}

/**
 * The device's peer certificate (`/data/config/shadow_peer.crt` and `.key`), signed by the fleet CA:
 * kept when the one there is this CA's, names the device, matches its key and has more than
 * RENEW_BEFORE_DAYS left (its key's mode set to 0600 when looser); else issued on a fresh key, the
 * key written first (0600), then the certificate, each atomically. The key never leaves this call.
 */
export async function ensurePeerCertificate(device: RemoteDevice, ca: FleetCa, deviceId: string, host: string, now: Date): Promise<StepOutcome> {
  const certPath = device.path(DEVICE_PATHS.peerCert);
  const keyPath = device.path(DEVICE_PATHS.peerKey);
  const [cert, key] = [await device.read(certPath), await device.read(keyPath)];
  let why = 'there was none';
  if (cert && key) {
    const reason = unfitReason(cert.content.toString('utf8'), key.content.toString('utf8'), ca, deviceId, now);
    if (reason === null) {
      if ((key.mode & 0o077) === 0) return { status: 'unchanged', detail: `kept: ${new X509Certificate(cert.content).fingerprint256}` };
      await device.chmod(keyPath, SECRET_MODE);
      return { status: 'done', detail: `kept; the key's mode was ${key.mode.toString(8)}, set to 0600` };
    }
    why = reason;
  }
  const issued = await issueCertificate(ca, {
    commonName: deviceId,
    dnsNames: [deviceId],
    ips: isIP(host) ? [host] : [],
    usages: ['serverAuth', 'clientAuth'],
    days: DEVICE_CERT_DAYS,
    now,
  });
  await device.writeAtomic(keyPath, issued.keyPem, SECRET_MODE);
  await device.writeAtomic(certPath, issued.certPem, PUBLIC_MODE);
  return {
    status: 'done',
    detail: `issued (${why === 'there was none' ? 'none there' : `the one there: ${why}`}): ${issued.fingerprint}, until ${issued.notAfter.toISOString()}`,
  };
}
