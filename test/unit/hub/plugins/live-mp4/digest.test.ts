import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { digestAuthorization, parseChallenge } from '../../../../../hub/plugins/live-mp4/src/digest.js';

const md5 = (s: string) => createHash('md5').update(s).digest('hex');

describe('RTSP Digest sign-in', () => {
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
});
