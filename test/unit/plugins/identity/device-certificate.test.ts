import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../../../core/src/log/logger.js';
import { ensureDeviceCertificate } from '../../../../plugins/identity/src/device-certificate.js';
import { cannotMount, mountSmallFilesystem, type SmallFilesystem } from '../../../support/small-filesystem.js';

const logger = createLogger({ level: 'silent' });

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
