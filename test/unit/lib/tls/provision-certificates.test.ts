import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { chmod, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';
import { checkIssuedBy } from '../../../../lib/tls/certificate-check.js';
import { openFleetCa, type FleetCa } from '../../../../lib/tls/fleet-ca.js';
import { provisionDeviceCertificate, provisionHubCertificate } from '../../../../lib/tls/provision-certificates.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';

const DAY_MS = 86_400_000;
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

describe('provisioning device and hub certificates', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  let scratch: ScratchDir;
  let ca: FleetCa;
  let root: string;
  beforeEach(async () => {
    scratch = await scratchDir('lookout-provision-');
    ca = (await openFleetCa(join(scratch.dir, 'ca'), { now })).ca;
    root = join(scratch.dir, 'cam-1');
  });
  afterEach(() => scratch.cleanup());

  it('a device certificate: CN and SAN DNS = device id, SAN IPs, serverAuth+clientAuth, CA:FALSE, two years, key 0600, the fleet CA beside it', async () => {
    const made = await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2', '::1'], now });
    assert.equal(made.action, 'created');
    assert.equal(made.certPath, join(root, 'data/config/shadow_peer.crt'));
    assert.equal(made.keyPath, join(root, 'data/config/shadow_peer.key'));
    assert.equal(made.caPath, join(root, 'data/config/fleet_ca.crt'));
    const pem = await readFile(made.certPath, 'utf8');
    const cert = new X509Certificate(pem);
    assert.equal(cert.subject.split('\n')[0], 'CN=cam-1');
    assert.equal(cert.subjectAltName, 'DNS:cam-1, IP Address:127.0.0.2, IP Address:0:0:0:0:0:0:0:1');
    assert.deepEqual(cert.keyUsage, [SERVER_AUTH, CLIENT_AUTH]);
    assert.equal(cert.ca, false);
    assert.equal(cert.fingerprint256, made.fingerprint);
    const days = (new Date(cert.validTo).getTime() - now.getTime()) / DAY_MS;
    assert.equal(Math.round(days), 730);
    assert.ok(checkIssuedBy(pem, ca.certPem, now).ok);
    assert.equal(await readFile(made.caPath, 'utf8'), ca.certPem);
    assert.equal((await stat(made.keyPath)).mode & 0o777, 0o600);
    assert.ok(cert.checkPrivateKey((await import('node:crypto')).createPrivateKey(await readFile(made.keyPath))));
  });

  it('is idempotent: a fit certificate of the same CA is kept byte for byte; --force issues a new one', async () => {
    const first = await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2'], now });
    const pem = await readFile(first.certPath, 'utf8');
    const again = await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2'], now: new Date(now.getTime() + DAY_MS) });
    assert.equal(again.action, 'kept');
    assert.equal(again.fingerprint, first.fingerprint);
    assert.equal(await readFile(first.certPath, 'utf8'), pem);
    // Asking for fewer addresses than it carries still fits.
    assert.equal((await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, now })).action, 'kept');
    const forced = await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2'], force: true, now });
    assert.deepEqual([forced.action, forced.reason], ['replaced', 'forced']);
    assert.notEqual(forced.fingerprint, first.fingerprint);
  });

  it('replaces a certificate that is not fit, saying why', async () => {
    const replaceReason = async (opts: { ips?: string[]; deviceId?: string; now?: Date }) => {
      const r = await provisionDeviceCertificate(ca, { deviceId: opts.deviceId ?? 'cam-1', dataRoot: root, ips: opts.ips ?? [], now: opts.now ?? now });
      assert.equal(r.action, 'replaced');
      return r.reason ?? '';
    };
    await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2'], now });
    assert.match(await replaceReason({ ips: ['127.0.0.3'] }), /subjectAltName lacks 127\.0\.0\.3/);
    assert.match(await replaceReason({ deviceId: 'cam-2' }), /it names "cam-1", not "cam-2"/);
    assert.match(await replaceReason({ deviceId: 'cam-2', now: new Date(now.getTime() + 716 * DAY_MS) }), /it expires in 14 days/);
    assert.match(await replaceReason({ deviceId: 'cam-2', now: new Date(now.getTime() + 2000 * DAY_MS) }), /expired on/);

    const foreign = (await openFleetCa(join(scratch.dir, 'foreign'), { now })).ca;
    await provisionDeviceCertificate(foreign, { deviceId: 'cam-2', dataRoot: root, now });
    assert.match(await replaceReason({ deviceId: 'cam-2' }), /is not issued by this CA/);
    assert.equal(await readFile(join(root, 'data/config/fleet_ca.crt'), 'utf8'), ca.certPem, 'the fleet CA file follows the CA');

    await rm(join(root, 'data/config/shadow_peer.key'));
    assert.match(await replaceReason({ deviceId: 'cam-2' }), /its key file is missing/);
    const other = await provisionHubCertificate(ca, { hubDataDir: join(scratch.dir, 'hub'), now });
    await writeFile(join(root, 'data/config/shadow_peer.key'), await readFile(other.keyPath));
    assert.match(await replaceReason({ deviceId: 'cam-2' }), /the key file beside it is not its key/);
  });

  it('a kept certificate whose key other users may read: the key is made 0600 and the report says so', async () => {
    const first = await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2'], now });
    const keyBefore = await readFile(first.keyPath, 'utf8');
    await chmod(first.keyPath, 0o644);
    const kept = await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2'], now });
    assert.equal(kept.action, 'kept');
    assert.equal(kept.fingerprint, first.fingerprint);
    assert.match(kept.note ?? '', /its key file was mode 0644, open to other users: now 0600 \(--force issues a new key/);
    assert.equal((await stat(first.keyPath)).mode & 0o777, 0o600);
    assert.equal(await readFile(first.keyPath, 'utf8'), keyBefore, 'the same key, only its mode changed');
    const hub = await provisionHubCertificate(ca, { hubDataDir: join(scratch.dir, 'hub'), now });
    await chmod(hub.keyPath, 0o660);
    const hubKept = await provisionHubCertificate(ca, { hubDataDir: join(scratch.dir, 'hub'), now });
    assert.match(hubKept.note ?? '', /mode 0660/);
    assert.equal((await stat(hub.keyPath)).mode & 0o777, 0o600);
    const again = await provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['127.0.0.2'], now });
    assert.equal(again.note, undefined, 'nothing to say once it is 0600');
  });

  it('the hub certificate: CN lookout-hub, clientAuth only, under <hub data dir>/tls/', async () => {
    const hubDir = join(scratch.dir, 'hub');
    const hub = await provisionHubCertificate(ca, { hubDataDir: hubDir, now });
    assert.deepEqual(
      [hub.certPath, hub.keyPath, hub.caPath],
      ['hub.crt', 'hub.key', 'fleet_ca.crt'].map((f) => join(hubDir, 'tls', f)),
    );
    const cert = new X509Certificate(await readFile(hub.certPath));
    assert.equal(cert.subject.split('\n')[0], 'CN=lookout-hub');
    assert.deepEqual(cert.keyUsage, [CLIENT_AUTH]);
    assert.equal((await stat(hub.keyPath)).mode & 0o777, 0o600);
    assert.equal((await provisionHubCertificate(ca, { hubDataDir: hubDir, now })).action, 'kept');
  });

  it('refuses an address that is not one, before writing anything', async () => {
    await assert.rejects(
      provisionDeviceCertificate(ca, { deviceId: 'cam-1', dataRoot: root, ips: ['cam.local'], now }),
      (e) => isLookoutError(e, 'argument_invalid') && /"cam\.local" is not an IP address/.test(e.message),
    );
    await assert.rejects(stat(join(root, 'data/config/shadow_peer.crt')), { code: 'ENOENT' });
  });
});
