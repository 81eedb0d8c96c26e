import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { chmod, copyFile, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';
import { keyMatchesCertificate } from '../../../../lib/tls/certificate-check.js';
import { CA_COMMON_NAME, openFleetCa } from '../../../../lib/tls/fleet-ca.js';
import { x509 } from '../../../../lib/tls/x509-provider.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';

const DAY_MS = 86_400_000;

describe('the fleet CA', () => {
  let scratch: ScratchDir;
  beforeEach(async () => {
    scratch = await scratchDir('lookout-ca-');
  });
  afterEach(() => scratch.cleanup());

  it('is created on first use: P-256, CA:TRUE with pathlen 0, ten years, its key mode 0600', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const { ca, created } = await openFleetCa(scratch.dir, { now });
    assert.equal(created, true);
    const cert = new X509Certificate(await readFile(join(scratch.dir, 'ca.crt')));
    assert.equal(cert.ca, true);
    assert.equal(cert.subject.split('\n')[0], `CN=${CA_COMMON_NAME}`);
    assert.equal(cert.publicKey.asymmetricKeyType, 'ec');
    assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(cert.fingerprint256, ca.fingerprint);
    assert.ok(cert.verify(cert.publicKey), 'self-signed');
    const years = (new Date(cert.validTo).getTime() - now.getTime()) / DAY_MS / 365;
    assert.ok(years > 9.9 && years < 10.1, `valid for ${years} years`);
    const bc = ca.cert.getExtension(x509.BasicConstraintsExtension);
    assert.deepEqual([bc?.critical, bc?.ca, bc?.pathLength], [true, true, 0], 'basicConstraints critical, CA:TRUE, pathlen:0');
    const ku = ca.cert.getExtension(x509.KeyUsagesExtension);
    assert.equal(ku?.usages, x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    assert.equal((await stat(join(scratch.dir, 'ca.key'))).mode & 0o777, 0o600);
    assert.equal((await stat(join(scratch.dir, 'ca.crt'))).mode & 0o777, 0o644);
  });

  it('is loaded, not replaced, when it is there', async () => {
    const first = await openFleetCa(scratch.dir);
    const again = await openFleetCa(scratch.dir);
    assert.equal(again.created, false);
    assert.equal(again.ca.fingerprint, first.ca.fingerprint);
    assert.equal(await readFile(join(scratch.dir, 'ca.crt'), 'utf8'), first.ca.certPem);
  });

  it('refuses a half pair, a key of another CA and a non-CA certificate, naming the file, and writes nothing', async () => {
    const other = await scratchDir('lookout-ca-other-');
    try {
      await openFleetCa(scratch.dir);
      await openFleetCa(other.dir);
      const refusedWith = (pattern: RegExp) => (e: unknown) => isLookoutError(e, 'argument_invalid') && pattern.test(e.message);

      await copyFile(join(other.dir, 'ca.key'), join(scratch.dir, 'ca.key'));
      await assert.rejects(openFleetCa(scratch.dir), refusedWith(/ca\.key is not the key of .*ca\.crt/));

      await rm(join(scratch.dir, 'ca.key'));
      const certBefore = await readFile(join(scratch.dir, 'ca.crt'), 'utf8');
      await assert.rejects(openFleetCa(scratch.dir), refusedWith(/ca\.crt exists without ca\.key/));
      assert.equal(await readFile(join(scratch.dir, 'ca.crt'), 'utf8'), certBefore, 'the certificate is left as it was');

      await rm(join(scratch.dir, 'ca.crt'));
      await copyFile(join(other.dir, 'ca.key'), join(scratch.dir, 'ca.key'));
      // A leftover (older than a creation under way could be) is refused at once.
      const anHourAgo = new Date(Date.now() - 3_600_000);
      await utimes(join(scratch.dir, 'ca.key'), anHourAgo, anHourAgo);
      await assert.rejects(openFleetCa(scratch.dir), refusedWith(/ca\.key exists without ca\.crt/));

      await writeFile(join(scratch.dir, 'ca.crt'), 'not a certificate\n');
      await assert.rejects(openFleetCa(scratch.dir), refusedWith(/cannot be parsed/));
    } finally {
      await other.cleanup();
    }
  });

  it('refuses an expired CA rather than issuing under it', async () => {
    await openFleetCa(scratch.dir, { now: new Date('2030-01-01T00:00:00Z') });
    await assert.rejects(
      openFleetCa(scratch.dir, { now: new Date('2041-01-01T00:00:00Z') }),
      (e) => isLookoutError(e, 'argument_invalid') && /expired on 2039/.test(e.message),
    );
  });

  it('refuses a ca.key other users may read, like the fleet secret, and leaves its mode as it is', async () => {
    const first = await openFleetCa(scratch.dir);
    const key = join(scratch.dir, 'ca.key');
    for (const mode of [0o644, 0o640, 0o604, 0o620]) {
      await chmod(key, mode);
      await assert.rejects(
        openFleetCa(scratch.dir),
        (e) =>
          isLookoutError(e, 'argument_invalid') &&
          e.message.includes(`${key} is open to other users (mode 0${mode.toString(8)}): chmod 600 it`) &&
          (e.details as { path?: string }).path === key,
        `mode ${mode.toString(8)}`,
      );
      assert.equal((await stat(key)).mode & 0o777, mode, 'not changed behind the operator’s back');
    }
    await chmod(key, 0o400);
    assert.equal((await openFleetCa(scratch.dir)).ca.fingerprint, first.ca.fingerprint, 'owner-only (0400) is fine');
  });

  it('is created once when several runs start on an empty folder: one creates, the others load that CA', async () => {
    const dir = join(scratch.dir, 'new');
    const runs = await Promise.all([0, 1, 2, 3].map(() => openFleetCa(dir)));
    assert.equal(runs.filter((r) => r.created).length, 1, 'exactly one run created the CA');
    const fingerprint = runs.find((r) => r.created)!.ca.fingerprint;
    assert.deepEqual(
      runs.map((r) => r.ca.fingerprint),
      [fingerprint, fingerprint, fingerprint, fingerprint],
    );
    const certPem = await readFile(join(dir, 'ca.crt'), 'utf8');
    assert.equal(new X509Certificate(certPem).fingerprint256, fingerprint, 'the certificate on disk is the one every run issues under');
    assert.ok(keyMatchesCertificate(certPem, await readFile(join(dir, 'ca.key'), 'utf8')), 'the key on disk is its key');
    assert.equal((await stat(join(dir, 'ca.key'))).mode & 0o777, 0o600);
  });

  it('a ca.key just written without its certificate is a creation under way: loaded once the certificate comes', async () => {
    const other = await scratchDir('lookout-ca-other-');
    try {
      const { ca } = await openFleetCa(other.dir);
      // What another run's creation looks like between its key and its certificate.
      await writeFile(join(scratch.dir, 'ca.key'), await readFile(join(other.dir, 'ca.key')), { mode: 0o600 });
      const opening = openFleetCa(scratch.dir);
      await delay(100);
      // As the creating run writes it: whole, by a rename (a plain write can be read half-done).
      await writeFile(join(scratch.dir, 'ca.crt.tmp'), ca.certPem);
      await rename(join(scratch.dir, 'ca.crt.tmp'), join(scratch.dir, 'ca.crt'));
      const loaded = await opening;
      assert.equal(loaded.created, false);
      assert.equal(loaded.ca.fingerprint, ca.fingerprint);
    } finally {
      await other.cleanup();
    }
  });

  it('with create: false, a folder without a CA is refused', async () => {
    await assert.rejects(openFleetCa(scratch.dir, { create: false }), (e) => isLookoutError(e, 'argument_invalid') && /no fleet CA in/.test(e.message));
  });
});
