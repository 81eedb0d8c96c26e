import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { digestAuthorization, parseDigestChallenge as parseChallenge } from '../../../../lib/auth/http-digest-client.js';
import { DigestServer } from '../../../../lib/auth/http-digest-server.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe('HTTP Digest client (the hub signing in to a device RTSP)', () => {
  it('answers an RFC 2069 challenge as cameras check it', () => {
    const c = parseChallenge('Digest realm="Lookout", nonce="abc.def", algorithm=MD5')!;
    assert.deepEqual(c, { realm: 'Lookout', nonce: 'abc.def', algorithm: 'MD5' });
    const header = digestAuthorization(c, 'admin', 'pw', 'DESCRIBE', 'rtsp://127.0.0.1:8554/preview_h264');
    const response = /response="([0-9a-f]+)"/.exec(header)![1];
    assert.equal(response, md5(`${md5('admin:Lookout:pw')}:abc.def:${md5('DESCRIBE:rtsp://127.0.0.1:8554/preview_h264')}`));
    assert.ok(!header.includes('pw"'), 'the password itself is never sent');
  });

  it('uses qop=auth with a counter and a client nonce when offered', () => {
    const c = parseChallenge('Digest realm="r", nonce="n", qop="auth,auth-int", opaque="o"')!;
    const header = digestAuthorization(c, 'u', 'p', 'PLAY', 'rtsp://h/x', 3);
    const nc = /nc=([0-9a-f]{8})/.exec(header)![1];
    const cnonce = /cnonce="([0-9a-f]+)"/.exec(header)![1];
    assert.equal(nc, '00000003');
    const expected = md5(`${md5('u:r:p')}:n:${nc}:${cnonce}:auth:${md5('PLAY:rtsp://h/x')}`);
    assert.ok(header.includes(`response="${expected}"`));
    assert.ok(header.includes('opaque="o"'));
    assert.equal(parseChallenge('Basic realm="x"'), undefined);
  });

  it('is answered ok by the one DigestServer, in both forms its options allow', () => {
    const rtsp = new DigestServer({ realm: 'Lookout', user: 'admin', password: 'pw', lifetimeMs: 60_000, maxNonces: 8, offerQop: false, allowNoQop: true });
    const uri = 'rtsp://127.0.0.1:8554/preview_h264';
    const c = parseChallenge(rtsp.challenge(false, 'conn-1'))!;
    assert.equal(c.qop, undefined);
    const header = digestAuthorization(c, 'admin', 'pw', 'DESCRIBE', uri);
    assert.equal(rtsp.verify(header, { method: 'DESCRIBE', uri, binding: 'conn-1' }), 'ok');
    assert.equal(rtsp.verify(header, { method: 'DESCRIBE', uri, binding: 'conn-2' }), 'refused', 'bound to its connection');
    assert.equal(rtsp.verify(digestAuthorization(c, 'admin', 'nope', 'DESCRIBE', uri), { method: 'DESCRIBE', uri, binding: 'conn-1' }), 'refused');

    const http = new DigestServer({ realm: 'ONVIF', user: 'admin', password: 'pw', lifetimeMs: 60_000, maxNonces: 8, offerQop: true, allowNoQop: false });
    const h = parseChallenge(http.challenge())!;
    const req = { method: 'POST', uri: '/onvif/device_service' };
    assert.equal(http.verify(digestAuthorization(h, 'admin', 'pw', req.method, req.uri, 1), req), 'ok');
    assert.equal(http.verify(digestAuthorization(h, 'admin', 'pw', req.method, req.uri, 1), req), 'refused', 'an nc is spent once');
    assert.equal(http.verify(digestAuthorization(h, 'admin', 'pw', req.method, req.uri, 2), req), 'ok');
  });
});
