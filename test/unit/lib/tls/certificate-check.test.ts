import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { checkIssuedBy, commonNameOf, keyMatchesCertificate } from '../../../../lib/tls/certificate-check.js';
import { openFleetCa, type FleetCa } from '../../../../lib/tls/fleet-ca.js';
import { issueCertificate, type IssuedCertificate } from '../../../../lib/tls/issue-certificate.js';
import { scratchDir, type ScratchDir } from '../../../support/scratch-dir.js';

describe('checkIssuedBy', () => {
  const now = new Date('2030-06-01T00:00:00Z');
  let dirs: ScratchDir[] = [];
  let ca: FleetCa;
  let foreign: FleetCa;
  let leaf: IssuedCertificate;
  before(async () => {
    dirs = [await scratchDir('lookout-check-'), await scratchDir('lookout-check-foreign-')];
    ca = (await openFleetCa(dirs[0].dir, { now })).ca;
    foreign = (await openFleetCa(dirs[1].dir, { now })).ca;
    leaf = await issueCertificate(ca, { commonName: 'cam,1 "odd"', ips: ['127.0.0.2'], usages: ['serverAuth', 'clientAuth'], days: 30, now });
  });
  after(() => Promise.all(dirs.map((d) => d.cleanup())));

  it('accepts a certificate of the CA inside its validity, with its fingerprint and end', () => {
    const check = checkIssuedBy(leaf.certPem, ca.certPem, now);
    assert.ok(check.ok, check.ok ? '' : check.reason);
    assert.equal(check.fingerprint, leaf.fingerprint);
    assert.equal(check.notAfter.getTime(), now.getTime() + 30 * 86_400_000);
  });

  it('refuses a certificate of another CA, naming both', () => {
    const check = checkIssuedBy(leaf.certPem, foreign.certPem, now);
    assert.equal(check.ok, false);
    assert.match(check.ok ? '' : check.reason, /is not issued by this CA/);
  });

  it('refuses outside the validity: not yet valid, expired; and an expired CA', () => {
    const early = checkIssuedBy(leaf.certPem, ca.certPem, new Date(now.getTime() - 2 * 3600_000));
    assert.match(early.ok ? '' : early.reason, /not valid before/);
    const late = checkIssuedBy(leaf.certPem, ca.certPem, new Date(now.getTime() + 31 * 86_400_000));
    assert.match(late.ok ? '' : late.reason, /the certificate is expired on/);
    const caGone = checkIssuedBy(leaf.certPem, ca.certPem, new Date(now.getTime() + 11 * 365 * 86_400_000));
    assert.match(caGone.ok ? '' : caGone.reason, /the CA certificate is expired/);
  });

  it('refuses garbage and a CA file that holds an end-entity certificate', () => {
    assert.match(((c) => (c.ok ? '' : c.reason))(checkIssuedBy('garbage', ca.certPem, now)), /the certificate cannot be parsed/);
    assert.match(((c) => (c.ok ? '' : c.reason))(checkIssuedBy(leaf.certPem, 'garbage', now)), /the CA certificate cannot be parsed/);
    assert.match(((c) => (c.ok ? '' : c.reason))(checkIssuedBy(leaf.certPem, leaf.certPem, now)), /not a CA/);
  });

  it('keyMatchesCertificate and commonNameOf read the pair and the unescaped CN', async () => {
    const other = await issueCertificate(ca, { commonName: 'x', usages: ['clientAuth'], days: 1, now });
    assert.equal(keyMatchesCertificate(leaf.certPem, leaf.keyPem), true);
    assert.equal(keyMatchesCertificate(leaf.certPem, other.keyPem), false);
    assert.equal(keyMatchesCertificate(leaf.certPem, 'garbage'), false);
    assert.equal(commonNameOf(new X509Certificate(leaf.certPem)), 'cam,1 "odd"');
  });
});
