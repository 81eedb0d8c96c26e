import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { connect, createServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { isLookoutError } from '../../../../core/src/errors/lookout-error.js';
import { keyMatchesCertificate } from '../../../../lib/tls/certificate-check.js';
import { createSelfSignedCertificate } from '../../../../lib/tls/self-signed-lazy.js';
import { x509 } from '../../../../lib/tls/x509-provider.js';

describe('a self-signed device certificate (for a device the fleet CA did not provision)', () => {
  it('is its own CA on a P-256 key, names the device and its addresses, and a peer can pin it', async () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const made = await createSelfSignedCertificate({ commonName: 'cam-1', dnsNames: ['cam-1', 'not a dns name'], ips: ['127.0.0.1', '::1'], now });
    const cert = new X509Certificate(made.certPem);
    assert.equal(cert.fingerprint256, made.fingerprint);
    assert.equal(cert.subject, 'CN=cam-1\nO=Lookout device');
    assert.equal(cert.ca, true);
    assert.ok(cert.verify(cert.publicKey), 'signed by its own key');
    assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.equal(cert.subjectAltName, 'DNS:cam-1, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    assert.equal(Math.round((new Date(cert.validTo).getTime() - now.getTime()) / 86_400_000), 3650);
    const parsed = new x509.X509Certificate(made.certPem);
    const ku = parsed.getExtension(x509.KeyUsagesExtension);
    assert.equal(ku?.usages, x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign);
    assert.ok(keyMatchesCertificate(made.certPem, made.keyPem));
  });

  it('serves TLS 1.3 to a client that pins it as its only trust anchor', async () => {
    const made = await createSelfSignedCertificate({ commonName: 'cam-1', ips: ['127.0.0.1'] });
    const server = createServer({ key: made.keyPem, cert: made.certPem, minVersion: 'TLSv1.3' }, (s) => s.end('pinned'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, ca: made.certPem, minVersion: 'TLSv1.3' });
        let got = '';
        s.setEncoding('utf8');
        s.on('data', (d: string) => (got += d));
        s.on('end', () => resolve(got));
        s.on('error', reject);
      });
      assert.equal(text, 'pinned');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a name or address a certificate cannot carry', async () => {
    await assert.rejects(createSelfSignedCertificate({ commonName: 'cam\n1' }), (e) => isLookoutError(e, 'argument_invalid') && /printable/.test(e.message));
    await assert.rejects(
      createSelfSignedCertificate({ commonName: 'cam-1', ips: ['10.0.0'] }),
      (e) => isLookoutError(e, 'argument_invalid') && /not an IP/.test(e.message),
    );
  });
});
