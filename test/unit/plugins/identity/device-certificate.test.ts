import assert from 'node:assert/strict';
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../core/src/log/logger.js';
import { objectIdentifier, time, unsignedInteger } from '../../../../plugins/identity/src/der.js';
import { ensureDeviceCertificate } from '../../../../plugins/identity/src/device-certificate.js';
import { createSelfSignedCertificate } from '../../../../plugins/identity/src/self-signed-cert.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../../support/small-filesystem.js';

const logger = createLogger({ level: 'silent' });

describe('DER encodings', () => {
  it('encodes object identifiers, integers and times as X.690 says', () => {
    assert.equal(objectIdentifier('1.2.840.10045.4.3.2').toString('hex'), '06082a8648ce3d040302');
    assert.equal(objectIdentifier('2.5.29.19').toString('hex'), '0603551d13');
    assert.equal(unsignedInteger(Buffer.from([0x80])).toString('hex'), '02020080');
    assert.equal(unsignedInteger(Buffer.from([0, 0, 5])).toString('hex'), '020105');
    assert.equal(time(new Date('2049-12-31T23:59:59Z')).toString(), '\x17\x0d491231235959Z');
    assert.equal(time(new Date('2050-01-01T00:00:00Z')).toString(), '\x18\x0f20500101000000Z');
  });
});

describe('self-signed device certificate', () => {
  const made = createSelfSignedCertificate({ commonName: 'cam-7', dnsNames: ['cam-7', 'not a dns name!'], ips: ['127.0.0.1'] });
  const cert = new X509Certificate(made.certPem);

  it('parses, is signed by its own key and matches the private key', () => {
    assert.equal(cert.verify(cert.publicKey), true);
    assert.equal(cert.checkPrivateKey(createPrivateKey(made.keyPem)), true);
    assert.equal(cert.issuer, cert.subject);
    assert.match(cert.subject, /CN=cam-7/);
    assert.equal(cert.ca, true);
    assert.equal(cert.subjectAltName, 'DNS:cam-7, IP Address:127.0.0.1');
    assert.ok(new Date(cert.validTo).getTime() > Date.now() + 9 * 365 * 86400_000);
    assert.ok(new Date(cert.validFrom).getTime() <= Date.now());
  });

  it('has the SHA-256 fingerprint of its DER in colon hex', () => {
    const hex = createHash('sha256').update(cert.raw).digest('hex').toUpperCase();
    assert.equal(made.fingerprint, hex.match(/../g)!.join(':'));
  });

  it('authenticates a real TLS handshake when pinned as the trust anchor', async () => {
    const server = createServer({ cert: made.certPem, key: made.keyPem }, (socket) => socket.end('hi'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, ca: made.certPem, servername: 'cam-7' }, () => {
          assert.equal(socket.authorized, true);
          assert.equal(socket.getPeerX509Certificate()?.fingerprint256, made.fingerprint);
        });
        let data = '';
        socket.on('data', (d: Buffer) => (data += d.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
      assert.equal(text, 'hi');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('ensureDeviceCertificate', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookout-cert-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates on first start (key 0600) and reuses the same certificate after', async () => {
    const certPath = join(dir, 'data', 'config', 'shadow_peer.crt');
    const keyPath = join(dir, 'data', 'config', 'shadow_peer.key');
    const first = await ensureDeviceCertificate({ certPath, keyPath, generate: true, commonName: 'cam-1', log: logger });
    assert.equal(first.generated, true);
    assert.equal((await stat(keyPath)).mode & 0o777, 0o600);
    assert.equal(new X509Certificate(await readFile(certPath)).fingerprint256, first.fingerprint);
    const second = await ensureDeviceCertificate({ certPath, keyPath, generate: true, commonName: 'cam-1', log: logger });
    assert.deepEqual([second.generated, second.fingerprint], [false, first.fingerprint]);
  });

  it('reports no fingerprint, with why, when absent and not to be generated, or unreadable', async () => {
    const none = await ensureDeviceCertificate({ certPath: join(dir, 'x.crt'), keyPath: join(dir, 'x.key'), generate: false, commonName: 'c', log: logger });
    assert.equal(none.fingerprint, null);
    assert.match(none.problem!, /no device certificate at/);
    await writeFile(join(dir, 'bad.crt'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    const bad = await ensureDeviceCertificate({ certPath: join(dir, 'bad.crt'), keyPath: join(dir, 'bad.key'), generate: true, commonName: 'c', log: logger });
    assert.equal(bad.fingerprint, null);
    assert.match(bad.problem!, /cannot be parsed/);
    assert.equal(await readFile(join(dir, 'bad.crt'), 'utf8').then((t) => t.includes('AAAA')), true, 'a provisioned file is never overwritten');
  });
});

describe('ensureDeviceCertificate on a full disk', { skip: cannotMount() }, () => {
  let disk: SmallFilesystem | undefined;
  before(async () => {
    disk = await mountSmallFilesystem({ sizeKiB: 64, prefix: 'lookout-cert-full-' });
  });
  after(async () => {
    await disk?.unmount();
  });

  it('returns the generated pair as unsaved, with why, and leaves no file behind', async () => {
    const certPath = join(disk!.dir, 'data', 'config', 'shadow_peer.crt');
    const keyPath = join(disk!.dir, 'data', 'config', 'shadow_peer.key');
    disk!.fill();
    const made = await ensureDeviceCertificate({ certPath, keyPath, generate: true, commonName: 'cam-1', log: logger });
    assert.equal(made.generated, true);
    assert.ok(made.unsaved, 'the material is kept in memory');
    assert.match(made.unsaved.reason, /cannot write .*shadow_peer\.key: ENOSPC/);
    assert.equal(new X509Certificate(made.unsaved.certPem).fingerprint256, made.fingerprint);
    assert.equal(new X509Certificate(made.unsaved.certPem).checkPrivateKey(createPrivateKey(made.unsaved.keyPem)), true);
    assert.deepEqual(await readdir(join(disk!.dir, 'data', 'config')), []);
    disk!.free();
  });
});
